// Package pace is the seam under a robotsmw Guard's per-host schedule: the
// [Pacer] interface, the types that cross it, [Local], one host's
// schedule, and [Memory], the home of the schedule in one process.
//
// A crawler author does not need this package: a Guard keeps a Local in
// its state of each host. It is for sharing one schedule among several Guards — one
// Memory shared by the Guards of one process, or package redisstore's
// Pacer shared by a fleet of processes over Redis — and for writing
// another home of the schedule. Every home must pass the same contract
// (the rules on [Pacer]); this repository checks Memory, Locals and redisstore's
// Pacer against one table of cases.
//
// The rules a Pacer keeps (one request in flight per host by default, a
// rate of starts, a gap after the end of each response that grows with a
// slow host's response time, pauses and rate cuts after failures) and
// where they come from are described in docs/politeness.md.
package pace
