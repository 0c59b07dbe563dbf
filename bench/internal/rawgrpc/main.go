// Command rawgrpc is the baseline for the hook round-trip benchmark: a child
// process serving the plugin service over a unix socket with plain gRPC, no
// go-plugin and no host machinery. It answers provide-result with a fixed
// result, both as protocol 1's unary call and on protocol 2's Hooks stream
// (one answer message per call message, no multiplexing, deadlines or
// cancellation), and prints "ready" on stdout once it listens. With -tls it
// serves TLS with a fresh self-signed certificate and prints it (base64 DER)
// after "ready", so the cost of encryption can be told apart from the rest.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

type server struct {
	pluginv1.UnimplementedPluginServer
}

func (server) PreToolCallCanProvideResult(context.Context, *pluginv1.ToolCallRequest) (*pluginv1.ToolResultResponse, error) {
	return answer, nil
}

var answer = &pluginv1.ToolResultResponse{Result: &pluginv1.ToolResult{Content: `{"ok":true}`}}

// streamServer answers each call on the stream with one message, doing the
// work any stream server must: decode the call's payload and encode the
// answer into the reply.
type streamServer struct {
	pluginv2.UnimplementedPluginServer
}

func (streamServer) Hooks(s grpc.BidiStreamingServer[pluginv2.HostMessage, pluginv2.PluginMessage]) error {
	var req pluginv1.ToolCallRequest
	for {
		msg, err := s.Recv()
		if err != nil {
			return err
		}
		call := msg.GetCall()
		if call == nil {
			continue
		}
		reply := &pluginv2.PluginMessage{Id: call.Id, Last: true}
		if err := proto.Unmarshal(call.Payload, &req); err != nil {
			reply.Failure = &pluginv2.Failure{Kind: pluginv2.Failure_BAD_REQUEST, Message: err.Error()}
		} else if reply.Answer, err = proto.Marshal(answer); err != nil {
			return err
		}
		if err := s.Send(reply); err != nil {
			return err
		}
	}
}

func main() {
	useTLS := flag.Bool("tls", false, "serve TLS with a self-signed certificate")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: rawgrpc [-tls] <socket path>")
		os.Exit(2)
	}
	l, err := net.Listen("unix", flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var opts []grpc.ServerOption
	ready := "ready"
	if *useTLS {
		cert, der, err := selfSigned()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})))
		ready += " " + base64.StdEncoding.EncodeToString(der)
	}
	s := grpc.NewServer(opts...)
	pluginv1.RegisterPluginServer(s, server{})
	pluginv2.RegisterPluginServer(s, streamServer{})
	fmt.Println(ready)
	if err := s.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// selfSigned makes a certificate for "localhost", the name go-plugin's
// automatic mTLS uses too.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, der, nil
}
