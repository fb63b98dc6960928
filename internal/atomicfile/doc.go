// Package atomicfile writes a file whole or not at all: a temporary file in the same
// directory (".<name>.*", which a reader can recognise and remove after a crash), synced,
// renamed over the target, and the directory synced. The checkpoints and the certificate
// store use it.
package atomicfile
