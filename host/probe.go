package host

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/internal/childproc"
	"github.com/hookhost/hookhost/plugins/handshake"
)

// Probes find out what a plugin does in situations a normal start never
// puts it in. They run only when something went wrong, or in Check; each
// is bounded in time, and a probe that starts a process kills its whole
// process group before it returns.

// maxProbeWait bounds how long a probe waits for a rerun plugin to print
// its handshake line.
const maxProbeWait = 10 * time.Second

// rerunOptions say how a probe runs a plugin differently from a start.
type rerunOptions struct {
	noCookie bool // leave out the magic cookie
	tty      bool // stdout on a pseudo-terminal instead of a pipe
	wait     time.Duration
}

// rerunResult is what a rerun plugin did within its time.
type rerunResult struct {
	line string // the first stdout line with a "|", "" if none came
}

// rerun starts the plugin at path again with the environment a start
// gives it (a fresh client certificate and socket directory), changed as
// ro says, waits for its handshake line and kills its process group.
func rerun(ctx context.Context, path string, entry config.PluginEntry, ro rerunOptions) (rerunResult, error) {
	var res rerunResult
	// A pinned plugin is held to its pin here too: the file may have
	// changed since the start that failed or was checked.
	if entry.SHA256 != "" {
		if sum, err := fileSHA256(path); err != nil || !strings.EqualFold(sum, entry.SHA256) {
			return res, fmt.Errorf("not running %s again: it does not match plugins.entries sha256 pin", path)
		}
	}
	dir, err := os.MkdirTemp("", "hookhost-probe-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	certPEM, err := probeCert()
	if err != nil {
		return res, err
	}
	versions := make([]string, 0, 2)
	if entry.Protocol != 0 {
		versions = append(versions, strconv.Itoa(entry.Protocol))
	} else {
		for _, v := range spoken() {
			versions = append(versions, strconv.Itoa(v))
		}
	}
	cmd := exec.Command(path)
	cmd.Dir = entry.Dir // as a start runs it
	cmd.SysProcAttr = childproc.Attr(syscall.SIGTERM)
	cmd.Env = append(pluginEnv(entry.Env),
		"PLUGIN_MIN_PORT=10000", "PLUGIN_MAX_PORT=25000",
		"PLUGIN_PROTOCOL_VERSIONS="+strings.Join(versions, ","),
		"PLUGIN_CLIENT_CERT="+string(certPEM),
		plugin.EnvUnixSocketDir+"="+dir,
		fmt.Sprintf("%s=%d", handshake.HostPIDEnv, os.Getpid()))
	if !ro.noCookie {
		cmd.Env = append(cmd.Env, handshake.Config.MagicCookieKey+"="+handshake.Config.MagicCookieValue)
	}

	var out, childOut *os.File
	if ro.tty {
		out, childOut, err = openPTY()
	} else {
		out, childOut, err = os.Pipe()
	}
	if err != nil {
		return res, err
	}
	defer out.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		childOut.Close()
		return res, err
	}
	defer errR.Close()
	cmd.Stdout, cmd.Stderr = childOut, errW
	err = childproc.Start(cmd)
	childOut.Close()
	errW.Close()
	if err != nil {
		return res, err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		// Whatever the plugin started goes with it, as in procRunner.
		_ = childproc.KillGroup(cmd.Process.Pid)
		close(exited)
	}()
	// Nothing is made of its stderr, but a plugin blocked writing it
	// would never get to its handshake line.
	stderrDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, errR)
		close(stderrDone)
	}()
	lines := make(chan string, 1)
	go func() { lines <- firstHandshakeLine(out) }()

	t := time.NewTimer(ro.wait)
	defer t.Stop()
	select {
	case res.line = <-lines:
	case <-exited:
		// What it printed before it exited is still in the pipe.
		drain := time.NewTimer(pipeDrain)
		select {
		case res.line = <-lines:
		case <-drain.C:
		}
		drain.Stop()
	case <-t.C:
	case <-ctx.Done():
	}
	select {
	case <-exited:
	default:
		_ = childproc.KillGroup(cmd.Process.Pid)
		<-exited
	}
	// Whatever the plugin left holding the pipes cannot keep the probe.
	out.Close()
	select {
	case <-stderrDone:
	case <-time.After(pipeDrain):
		errR.Close()
	}
	return res, nil
}

// firstHandshakeLine reads lines until one looks like a handshake line
// (it has a "|"), within 64 KiB; a terminal adds "\r" to each line.
func firstHandshakeLine(r io.Reader) string {
	br := bufio.NewReader(io.LimitReader(r, 64<<10))
	for {
		line, err := br.ReadString('\n')
		if line = strings.TrimSpace(line); strings.Contains(line, "|") {
			return line
		}
		if err != nil {
			return ""
		}
	}
}

// probeCert makes a client certificate like the one go-plugin passes in
// PLUGIN_CLIENT_CERT.
func probeCert() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localhost"},
		DNSNames:              []string{"localhost"},
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: der}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// answersHealth reports whether the gRPC server at addr answers the health
// service over the given transport credentials within timeout.
func answersHealth(ctx context.Context, addr net.Addr, creds credentials.TransportCredentials, timeout time.Duration) bool {
	conn, err := grpc.NewClient("passthrough:///plugin",
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, addr.Network(), addr.String())
		}))
	if err != nil {
		return false
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err = grpc_health_v1.NewHealthClient(conn).Check(ctx,
		&grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
	// Any answer at all, an error status included, came over a connection
	// the server accepted.
	if err == nil {
		return true
	}
	c := status.Code(err)
	return c != codes.Unavailable && c != codes.DeadlineExceeded && c != codes.Canceled && c != codes.Unknown
}

// answersPlaintext reports whether the plugin serves gRPC without TLS.
func answersPlaintext(ctx context.Context, addr net.Addr, timeout time.Duration) bool {
	return answersHealth(ctx, addr, insecure.NewCredentials(), timeout)
}

// answersWithoutClientCert reports whether the plugin's TLS server, whose
// certificate roots trust, lets in a client with no certificate.
func answersWithoutClientCert(ctx context.Context, addr net.Addr, roots *x509.CertPool, timeout time.Duration) bool {
	return answersHealth(ctx, addr, credentials.NewTLS(&tls.Config{
		RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12,
	}), timeout)
}

// shutdown asks the plugin to shut down through go-plugin's controller:
// only for a plugin about to be stopped anyway.
func shutdown(ctx context.Context, conn *grpc.ClientConn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return conn.Invoke(ctx, "/plugin.GRPCController/Shutdown", &emptypb.Empty{}, &emptypb.Empty{})
}

// servedCert is the DER of the certificate the plugin's TLS server
// presents, nil if the probe could not get it. It presents the host's
// client certificate from cfg, and stops once it has seen the server's.
func servedCert(ctx context.Context, addr net.Addr, cfg *tls.Config, timeout time.Duration) []byte {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, addr.Network(), addr.String())
	if err != nil {
		return nil
	}
	var der []byte
	c := cfg.Clone()
	c.InsecureSkipVerify = true // only looked at, never trusted: the handshake is abandoned
	c.VerifyPeerCertificate = func(certs [][]byte, _ [][]*x509.Certificate) error {
		if len(certs) > 0 {
			der = certs[0]
		}
		return errSeen
	}
	conn := tls.Client(raw, c)
	defer conn.Close()
	_ = conn.HandshakeContext(ctx)
	return der
}

var errSeen = errors.New("hookhost: certificate seen")

// tlsProbe makes a TLS connection to the plugin as the host does and reads
// from it, to get the TLS alert of a server that refuses the host's client
// certificate: under TLS 1.3 it comes only after the client's side of the
// handshake is done. nil means the plugin's server took the connection.
func tlsProbe(ctx context.Context, addr net.Addr, cfg *tls.Config, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, addr.Network(), addr.String())
	if err != nil {
		return err
	}
	conn := tls.Client(raw, cfg.Clone())
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if err := conn.HandshakeContext(ctx); err != nil {
		return err
	}
	// A gRPC server speaks first after the handshake (its SETTINGS).
	if _, err := conn.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return nil
}
