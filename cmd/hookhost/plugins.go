package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/plugins/handshake"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/termtext"
)

// protocolVersions are the plugin protocol versions this host speaks.
func protocolVersions() string {
	vs := slices.Sorted(maps.Keys(handshake.VersionedPlugins(nil, nil)))
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ", ")
}

// downFailClosed is how a fail_closed plugin that is not running is shown.
const downFailClosed = "DOWN (fail_closed: blocking every tool call)"

func pluginsCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fs := newFlagSet("plugins")
		fs.String("c", defaultConfig, configFlagUsage)
		printHelp(stdout, "plugins", fs)
		return nil
	}
	if len(args) == 0 {
		return usageErr("plugins needs a subcommand: list or check (see hookhost plugins --help)")
	}
	if args[0] != "list" && args[0] != "check" {
		return usageErr("plugins has no subcommand %q: use list or check (see hookhost plugins --help)", args[0])
	}
	fs := newFlagSet("plugins " + args[0])
	inv, err := parseWithConfig(fs, args[1:], stdout)
	if err != nil {
		return err
	}
	if len(inv.words) > 0 {
		return usageErr("plugins %s takes no arguments, got %q (see hookhost plugins %s --help)", args[0], strings.Join(inv.words, " "), args[0])
	}
	cfg := inv.cfg
	// The route does not matter here, but a mistyped switch is refused as
	// chat and serve refuse it, before it reaches them.
	if _, _, err := config.ResolveGateway(cfg, nil); err != nil {
		return &exitError{code: 2, err: err}
	}
	if len(cfg.Plugins.Enabled) == 0 {
		fmt.Fprintln(stdout, "no plugins enabled (set plugins.enabled in the config)")
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// list shows what each plugin declares: it starts each once, without
	// the probes and reruns check makes to find warnings.
	results := host.Check(ctx, host.Specs(cfg), host.Options{Logger: logger(stderr, false, false), NoProbes: args[0] == "list"})

	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	failed := 0
	if args[0] == "list" {
		fmt.Fprintln(tw, "NAME\tVERSION\tPROTOCOL\tPATH\tHOOKS\tTOOLS\tMATCHERS\tCONFIG")
	} else {
		fmt.Fprintln(tw, "NAME\tSTATUS\tVERSION\tPROTOCOL\tPATH\tDETAIL")
	}
	for _, r := range results {
		if !r.OK {
			failed++
		}
		if args[0] == "list" {
			hooksCol, toolsCol, matchCol, configCol := "-", "-", "-", "-"
			if r.OK {
				hooksCol = joinOr(hookNames(r.Hooks), "-")
				toolsCol = joinOr(r.Tools, "-")
				matchCol = matchers(r)
				configCol = configKeys(r.Config)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, orDash(termtext.Printable(r.Version)), protocolCol(r), where(r), hooksCol, toolsCol, termtext.Printable(matchCol), termtext.Printable(configCol))
			continue
		}
		status, detail := "ok", fmt.Sprintf("%d hooks, %d tools, healthy", len(r.Hooks), len(r.Tools))
		if n := len(r.Warnings); n == 1 {
			detail += ", 1 warning"
		} else if n > 1 {
			detail += fmt.Sprintf(", %d warnings", n)
		}
		switch {
		case !r.OK && r.FailClosed:
			status, detail = downFailClosed, r.Err.Error()
		case !r.OK:
			status, detail = "FAILED", r.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, status, orDash(termtext.Printable(r.Version)), protocolCol(r), where(r), termtext.Printable(detail))
	}
	tw.Flush()
	if args[0] == "list" {
		for _, r := range results {
			if !r.OK {
				fmt.Fprintf(stdout, "\n%s did not start: %s\n", r.Name, termtext.Printable(r.Err.Error()))
				if r.FailClosed {
					fmt.Fprintf(stdout, "%s is fail_closed: while it does not start, every tool call is blocked\n", r.Name)
				}
			}
		}
	}
	// Warnings do not fail the check: the plugins work, at a cost.
	for _, r := range results {
		for _, w := range r.Warnings {
			fmt.Fprintf(stdout, "\nwarning: plugin %s: %s\n", r.Name, termtext.Printable(w.String()))
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d plugins failed", failed, len(results))
	}
	return nil
}

// protocolCol is the plugin protocol version a plugin spoke, "-" when it
// did not start.
func protocolCol(r host.CheckResult) string {
	if r.Protocol == 0 {
		return "-"
	}
	return "v" + strconv.Itoa(r.Protocol)
}

// where is the plugin's binary, or says that the plugin was attached to
// rather than started.
func where(r host.CheckResult) string {
	if r.Attached {
		return "(attached)"
	}
	return r.Path
}

// matchers shows the globs the plugin's tool hooks apply to, then each
// hook with globs of its own: "*; post_tool_call=kora__*".
func matchers(r host.CheckResult) string {
	out := joinOr(r.Matchers, "*")
	for _, h := range slices.Sorted(maps.Keys(r.HookMatchers)) {
		out += fmt.Sprintf("; %s=%s", h, joinOr(r.HookMatchers[h], "*"))
	}
	return out
}

// configKeys shows the config keys a plugin declared: "(none)" for a
// plugin that takes no config, "(any)" for one that did not say, whose
// config the host passes on unchecked.
func configKeys(c *hooks.ConfigKeys) string {
	switch {
	case c == nil:
		return "(any)"
	case len(c.Keys) == 0:
		return "(none)"
	}
	return strings.Join(c.Keys, ",")
}

func hookNames(hs []hooks.Name) []string {
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = string(h)
	}
	return names
}

func joinOr(items []string, empty string) string {
	if len(items) == 0 {
		return empty
	}
	return strings.Join(items, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
