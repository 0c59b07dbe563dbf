// Package replicatest runs hookhost serve as it is deployed with several
// replicas: three processes sharing one Redis server, behind nginx as a
// round-robin proxy, on the gateway route with a plugin that owns a tool,
// in front of a fake upstream. Its test checks that a conversation goes on
// whichever replica a request lands on, that one replica's crash loses
// nothing, and that an outage of Redis is refused loudly and recovered
// from without restarting a replica.
package replicatest
