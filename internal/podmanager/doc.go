// Package podmanager holds the desired pods: what the sources say should run, by UID and by
// full name. It is the desired half of the house; the runtime (through the pod cache) is the
// actual half.
package podmanager
