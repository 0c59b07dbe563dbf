// Package replicatest runs hookhost serve as it is deployed with several
// replicas: three processes sharing one Redis server, behind nginx as a
// round-robin proxy, on the gateway route with a plugin that owns a tool,
// in front of a fake upstream. Its test checks that a conversation goes on
// whichever replica a request lands on, that an inbound key's requests
// per minute are one budget over all replicas, that one replica's crash
// loses nothing, and that an outage of Redis is refused loudly and
// recovered from without restarting a replica. Its benchmark compares the
// throughput of one replica and of three behind nginx.
package replicatest
