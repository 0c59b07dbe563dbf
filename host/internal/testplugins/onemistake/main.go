// Command onemistake is a test plugin that, like handmade, does
// go-plugin's handshake by hand, as a plugin in another language must. It
// is correct in every way Check looks at today, and makes one more
// mistake, chosen by its base name up to a "-":
//
//	hangshutdown  serves go-plugin's controller, but its Shutdown never
//	              answers (a handler that waits on a lock or a stream)
//	relsock       prints its socket's path relative to its working
//	              directory, which the host resolves there; it works at
//	              every start
//	othercert     serves with one certificate and prints another, freshly
//	              made, in its handshake line (a certificate made twice)
//	escversion    answers Describe with a version holding a newline and
//	              terminal escape sequences
//
// Its plugin name is its whole base name.
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
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/plugins/handshake"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type plugin struct {
	sdk.Base
	name string
}

func (p *plugin) Info() sdk.Info {
	if mistake == "escversion" {
		return sdk.Info{Name: p.name, Version: "1.0.0\x1b]0;owned\x07\x1b[2K\r\nevil         ok      9.9.9    v2        /usr/bin/true  1 hooks, 0 tools, healthy"}
	}
	return sdk.Info{Name: p.name, Version: "1.0.0"}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "onemistake: "+format+"\n", a...)
	os.Exit(1)
}

var mistake string

func main() {
	name := filepath.Base(os.Args[0])
	mistake, _, _ = strings.Cut(name, "-")
	if os.Getenv(handshake.Config.MagicCookieKey) != handshake.Config.MagicCookieValue {
		fail("not started by hookhost (no magic cookie); this is a plugin")
	}
	version := handshake.ProtocolV1
	for _, v := range strings.Split(os.Getenv("PLUGIN_PROTOCOL_VERSIONS"), ",") {
		if n, err := strconv.Atoi(v); err == nil && slices.Contains(handshake.Protocols, n) && n > version {
			version = n
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		fail("key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		fail("certificate: %v", err)
	}
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM([]byte(os.Getenv("PLUGIN_CLIENT_CERT"))) {
		fail("no client certificate in PLUGIN_CLIENT_CERT")
	}
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: clientCAs, MinVersion: tls.VersionTLS12,
	})))
	p := &plugin{name: name}
	if version == handshake.ProtocolV2 {
		wire.RegisterV2(s, sdk.Adapt(p), p.Configure)
	} else {
		wire.RegisterV1(s, sdk.Adapt(p), p.Configure)
	}
	hs := health.NewServer()
	hs.SetServingStatus("plugin", grpc_health_v1.HealthCheckResponse_SERVING)
	grpc_health_v1.RegisterHealthServer(s, hs)
	s.RegisterService(&controller, struct{}{})

	dir := os.Getenv("PLUGIN_UNIX_SOCKET_DIR")
	sock := filepath.Join(dir, fmt.Sprintf("onemistake-%d.sock", os.Getpid()))
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fail("listen: %v", err)
	}
	go func() { _ = s.Serve(ln) }()
	addr := sock
	if mistake == "relsock" {
		wd, err := os.Getwd()
		if err != nil {
			fail("getwd: %v", err)
		}
		if addr, err = filepath.Rel(wd, sock); err != nil {
			fail("rel: %v", err)
		}
	}
	printed := der
	if mistake == "othercert" {
		tmpl.SerialNumber = big.NewInt(time.Now().UnixNano() + 1)
		if printed, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key); err != nil {
			fail("certificate: %v", err)
		}
		other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			fail("key: %v", err)
		}
		if printed, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, other.Public(), other); err != nil {
			fail("certificate: %v", err)
		}
	}
	line := strings.Join([]string{"1", strconv.Itoa(version), "unix", addr, "grpc", base64.RawStdEncoding.EncodeToString(printed)}, "|")
	os.Stdout.WriteString(line + "\n")
	select {}
}

var controller = grpc.ServiceDesc{
	ServiceName: "plugin.GRPCController",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Shutdown",
		Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(new(emptypb.Empty)); err != nil {
				return nil, err
			}
			if mistake == "hangshutdown" {
				select {} // never answers, never exits
			}
			go func() {
				time.Sleep(50 * time.Millisecond)
				os.Exit(0)
			}()
			return &emptypb.Empty{}, nil
		},
	}},
	Metadata: "grpc_controller.proto",
}
