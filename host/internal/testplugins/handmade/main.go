// Command handmade is a test plugin that does go-plugin's handshake by
// hand, the way a plugin in another language must (no go-plugin server):
// it checks the magic cookie, makes its own TLS certificate, serves the
// hookhost plugin service, gRPC health and go-plugin's controller over
// mutual TLS, and prints the handshake line. Started under a base name of
// the form MISTAKE or MISTAKE-anything, it makes that one mistake, so that
// links to one binary play every mistake a hand-written plugin makes:
//
//	good          none
//	padded        certificate in padded base64, its DER length chosen not
//	              to be a multiple of 3 so that there is padding
//	luckypad      certificate in padded base64, its DER length a multiple
//	              of 3 at its first start (so there is no padding) and not
//	              at later ones; it counts its starts in NAME.starts
//	              beside itself
//	nocert        no 6th (certificate) field
//	plaintext     serves without TLS, and so prints no certificate
//	wrongsan      certificate valid for plugin.example, not localhost
//	noclientauth  serves without asking for a client certificate
//	relnoclientauth
//	              noclientauth, with its socket's path printed relative
//	              to its working directory
//	distrust      does not trust the host's client certificate
//	nocookie      does not check the magic cookie
//	othercookie   checks another program's magic cookie, and exits
//	unflushed     buffers stdout the way C's stdio and Python do, flushing
//	              only a terminal
//	stderr        prints its handshake line on stderr
//	fields3       a handshake line of 3 fields
//	badcore       core protocol 2
//	badnet        network udp
//	netrpc        protocol netrpc
//	nocontroller  does not serve go-plugin's controller
//	noexit        answers Shutdown but does not exit
//	plainlog      logs a plain line, with no level, on stderr
//
// Its plugin name is its whole base name.
package main

import (
	"bufio"
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

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/plugins/handshake"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type plugin struct {
	sdk.Base
	name string
}

func (p *plugin) Info() sdk.Info { return sdk.Info{Name: p.name, Version: "1.0.0"} }

func (p *plugin) PreToolCallCanProvideResult(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	return &hooks.ToolResult{Content: `"answered by ` + p.name + `"`}, nil
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "handmade: "+format+"\n", a...)
	os.Exit(1)
}

// mistake is the one this process makes: its base name up to a "-".
var mistake string

func main() {
	name := filepath.Base(os.Args[0])
	mistake, _, _ = strings.Cut(name, "-")
	if mistake == "plainlog" {
		fmt.Fprintln(os.Stderr, "plainlog: starting up")
	}

	switch mistake {
	case "nocookie":
	case "othercookie":
		if os.Getenv("BASIC_PLUGIN") != "hello" {
			// What go-plugin's Serve says when it misses its cookie.
			fmt.Fprintln(os.Stderr, "This binary is a plugin. These are not meant to be executed directly.\n"+
				"Please execute the program that consumes these plugins, which will\nload any plugins automatically")
			os.Exit(1)
		}
	default:
		if os.Getenv(handshake.Config.MagicCookieKey) != handshake.Config.MagicCookieValue {
			fmt.Fprintln(os.Stderr, "handmade: not started by hookhost (no magic cookie); this is a plugin")
			os.Exit(1)
		}
	}

	version := handshake.ProtocolV1
	for _, v := range strings.Split(os.Getenv("PLUGIN_PROTOCOL_VERSIONS"), ",") {
		if n, err := strconv.Atoi(v); err == nil && slices.Contains(handshake.Protocols, n) && n > version {
			version = n
		}
	}

	dns := "localhost"
	if mistake == "wrongsan" {
		dns = "plugin.example"
	}
	pad := mistake == "padded"
	if mistake == "luckypad" {
		pad = countStart(name) > 1
	}
	cert, der := makeCert(dns, pad, mistake == "luckypad" && !pad)

	var opts []grpc.ServerOption
	if mistake != "plaintext" {
		clientCAs := x509.NewCertPool()
		if mistake != "distrust" && !clientCAs.AppendCertsFromPEM([]byte(os.Getenv("PLUGIN_CLIENT_CERT"))) {
			fail("no client certificate in PLUGIN_CLIENT_CERT")
		}
		auth := tls.RequireAndVerifyClientCert
		if mistake == "noclientauth" || mistake == "relnoclientauth" {
			auth = tls.NoClientCert
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientAuth:   auth,
			ClientCAs:    clientCAs,
			MinVersion:   tls.VersionTLS12,
		})))
	}
	s := grpc.NewServer(opts...)
	p := &plugin{name: name}
	if version == handshake.ProtocolV2 {
		wire.RegisterV2(s, sdk.Adapt(p), p.Configure)
	} else {
		wire.RegisterV1(s, sdk.Adapt(p), p.Configure)
	}
	hs := health.NewServer()
	hs.SetServingStatus("plugin", grpc_health_v1.HealthCheckResponse_SERVING)
	grpc_health_v1.RegisterHealthServer(s, hs)
	if mistake != "nocontroller" {
		s.RegisterService(&controller, struct{}{})
	}

	dir := os.Getenv("PLUGIN_UNIX_SOCKET_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	sock := filepath.Join(dir, fmt.Sprintf("handmade-%d.sock", os.Getpid()))
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fail("listen: %v", err)
	}
	go func() { _ = s.Serve(ln) }()

	network, protocol := "unix", "grpc"
	switch mistake {
	case "badnet":
		network = "udp"
	case "netrpc":
		protocol = "netrpc"
	}
	core := "1"
	if mistake == "badcore" {
		core = "2"
	}
	printedSock := sock
	if mistake == "relnoclientauth" {
		wd, err := os.Getwd()
		if err != nil {
			fail("getwd: %v", err)
		}
		if printedSock, err = filepath.Rel(wd, sock); err != nil {
			fail("rel: %v", err)
		}
	}
	fields := []string{core, strconv.Itoa(version), network, printedSock, protocol, base64.RawStdEncoding.EncodeToString(der)}
	switch mistake {
	case "padded", "luckypad":
		fields[5] = base64.StdEncoding.EncodeToString(der)
	case "nocert", "plaintext":
		fields = fields[:5]
	case "fields3":
		fields = fields[:3]
	}
	line := strings.Join(fields, "|") + "\n"

	switch mistake {
	case "stderr":
		os.Stderr.WriteString(line)
	case "unflushed":
		// A block-buffered stdout, flushed at once only on a terminal,
		// as C's stdio and Python's print do.
		out := bufio.NewWriterSize(os.Stdout, 8192)
		out.WriteString(line)
		if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			out.Flush()
		}
	default:
		os.Stdout.WriteString(line)
	}
	select {}
}

// countStart counts this start in NAME.starts beside the executable and
// returns how many there have been.
func countStart(name string) int {
	p := filepath.Join(filepath.Dir(os.Args[0]), name+".starts")
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fail("counting starts: %v", err)
	}
	f.WriteString("x")
	f.Close()
	data, err := os.ReadFile(p)
	if err != nil {
		fail("counting starts: %v", err)
	}
	return len(data)
}

// makeCert makes a self-signed server certificate for dns. With
// padded set it makes certificates until one's DER length is not a
// multiple of 3, so that its standard base64 ends in "="; with unpadded
// set, until one's is.
func makeCert(dns string, padded, unpadded bool) (tls.Certificate, []byte) {
	for {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			fail("key: %v", err)
		}
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(time.Now().UnixNano()),
			Subject:               pkix.Name{CommonName: dns},
			DNSNames:              []string{dns},
			ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
			BasicConstraintsValid: true,
			IsCA:                  true,
			NotBefore:             time.Now().Add(-time.Minute),
			NotAfter:              time.Now().Add(time.Hour),
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
		if err != nil {
			fail("certificate: %v", err)
		}
		if (padded && len(der)%3 == 0) || (unpadded && len(der)%3 != 0) {
			continue
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, der
	}
}

// controller is go-plugin's plugin.GRPCController, written out as a
// plugin in another language would from grpc_controller.proto.
var controller = grpc.ServiceDesc{
	ServiceName: "plugin.GRPCController",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Shutdown",
		Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(new(emptypb.Empty)); err != nil {
				return nil, err
			}
			if mistake == "noexit" {
				return &emptypb.Empty{}, nil
			}
			// Answer first, then go.
			go func() {
				time.Sleep(50 * time.Millisecond)
				os.Exit(0)
			}()
			return &emptypb.Empty{}, nil
		},
	}},
	Metadata: "grpc_controller.proto",
}
