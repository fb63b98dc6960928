// Package agent is nodelet's composition root: it builds the components from a Config, starts
// them in order and stops them when the context ends. It holds no pod state.
//
// Today it runs the pod config sources (manifest path, manifest URL) into the mux and hands the
// resulting PodUpdates to a Consumer; until the sync loop lands, the consumer logs the pods
// nodelet would run.
package agent
