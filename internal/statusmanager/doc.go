// Package statusmanager keeps the latest API status nodelet generated for each pod, so the
// local API (/pods), the CLI and (in cluster mode) the API server see one consistent view. A
// status never moves a pod out of a terminal phase.
package statusmanager
