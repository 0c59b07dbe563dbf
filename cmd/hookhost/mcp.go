package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/internal/mcpgate"
	"github.com/hookhost/hookhost/internal/termtext"
)

// mcpCmd runs hookhost mcp serve|list|check.
func mcpCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fs := newFlagSet("mcp")
		fs.String("c", defaultConfig, configFlagUsage)
		printHelp(stdout, "mcp", fs)
		return nil
	}
	if len(args) == 0 {
		return usageErr("mcp needs a subcommand: serve, list or check (see hookhost mcp --help)")
	}
	sub := args[0]
	if sub != "serve" && sub != "list" && sub != "check" {
		return usageErr("mcp has no subcommand %q: use serve, list or check (see hookhost mcp --help)", sub)
	}
	fs := newFlagSet("mcp " + sub)
	var verbose *bool
	if sub == "serve" {
		verbose = fs.Bool("v", false, "log each plugin and MCP server event to stderr")
	}
	inv, err := parseWithConfig(fs, args[1:], stdout)
	if err != nil {
		return err
	}
	if len(inv.words) > 0 {
		return usageErr("mcp %s takes no arguments, got %q (see hookhost mcp %s --help)", sub, strings.Join(inv.words, " "), sub)
	}
	if sub == "serve" {
		return mcpServe(inv, stdin, stdout, stderr, *verbose)
	}
	return mcpInspect(sub, inv.cfg, stdout, stderr)
}

// mcpServe serves the MCP gateway over stdin and stdout until the client
// disconnects or a signal comes. stdout carries MCP messages only: the
// start line, the logs and the plugins' stderr go to stderr.
func mcpServe(inv *invocation, stdin io.Reader, stdout, stderr io.Writer, verbose bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := logger(stderr, verbose, true)
	if verbose {
		inv.decisions = decisionLog(log)
	}
	stopTelemetry, err := startTelemetry(inv)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	h, err := open(ctx, inv, log, stderr)
	if err != nil {
		return err
	}
	defer closeHost(h)
	gw, err := h.MCPGateway(log.Named("mcp"))
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("mcp serve: %w", err)}
	}
	defer gw.Close()
	fmt.Fprintf(stderr, "hookhost: serving MCP on stdio: %d tools from %s\n", len(gw.Tools()), mcpSummary(h.MCPServers()))
	if err := gw.ServeStdio(ctx, stdin, stdout); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp serve: %w", err)
	}
	return nil
}

// mcpSummary names the MCP servers and how many failed to start.
func mcpSummary(sts []mcpgate.Status) string {
	var names []string
	failed := 0
	for _, st := range sts {
		if st.State == mcpgate.StateStopped {
			failed++
			continue
		}
		names = append(names, st.Name)
	}
	s := "no MCP servers"
	if len(names) > 0 {
		s = "MCP servers " + strings.Join(names, ", ")
	}
	if failed > 0 {
		s += fmt.Sprintf(" (%d failed to start)", failed)
	}
	return s
}

// mcpInspect starts each enabled MCP server once, concurrently, prints
// what it offers (list) or whether it works (check), and stops it.
func mcpInspect(sub string, cfg *config.Config, stdout, stderr io.Writer) error {
	servers := cfg.MCP.EnabledServers()
	if len(servers) == 0 {
		fmt.Fprintln(stdout, "no MCP servers enabled (add an [mcp.servers.NAME] table to the config)")
		return nil
	}
	log := logger(stderr, false, false)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	statuses := make([]mcpgate.Status, len(servers))
	failures := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			statuses[i], failures[i] = inspectServer(ctx, s.Spec(), log)
		})
	}
	wg.Wait()

	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if sub == "list" {
		// OFFERED: whether the server's tools join the model's
		// (offer_to_model), beside being served to MCP clients.
		fmt.Fprintln(tw, "NAME\tTRANSPORT\tSTATE\tPROTOCOL\tOFFERED\tTOOLS")
	} else {
		fmt.Fprintln(tw, "NAME\tSTATUS\tTRANSPORT\tPROTOCOL\tDETAIL")
	}
	failed := 0
	for i, st := range statuses {
		if failures[i] != nil {
			failed++
		}
		if sub == "list" {
			state, tools := st.State, joinOr(st.Tools, "-")
			if failures[i] != nil {
				state, tools = "FAILED", "-"
			}
			offered := "no"
			if servers[i].Spec().OfferToModel {
				offered = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", st.Name, st.Transport, state, orDash(st.Protocol), offered, termtext.Printable(tools))
			continue
		}
		status, detail := "ok", fmt.Sprintf("%d tools", len(st.Tools))
		if failures[i] != nil {
			status, detail = "FAILED", failures[i].Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", st.Name, status, st.Transport, orDash(st.Protocol), termtext.Printable(detail))
	}
	tw.Flush()
	if sub == "list" {
		for i, st := range statuses {
			if failures[i] != nil {
				fmt.Fprintf(stdout, "\n%s did not start: %s\n", st.Name, termtext.Printable(failures[i].Error()))
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d MCP servers failed", failed, len(servers))
	}
	return nil
}

// inspectServer connects to one server, reads its state and tools, and
// closes it. A server that does not connect is not retried.
func inspectServer(ctx context.Context, spec mcpgate.ServerSpec, log hclog.Logger) (mcpgate.Status, error) {
	u, err := mcpgate.New(spec, mcpgate.Options{Logger: log, Version: version})
	if err != nil {
		return mcpgate.Status{Name: spec.Name, Transport: transportOf(spec)}, err
	}
	err = u.Start(ctx)
	st := u.Status()
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	u.Close(closeCtx)
	return st, err
}

func transportOf(spec mcpgate.ServerSpec) string {
	if spec.Stdio() {
		return "stdio"
	}
	return "http"
}
