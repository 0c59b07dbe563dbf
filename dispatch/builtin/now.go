package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
)

var nowSchema = compactJSON(`{
	"type": "object",
	"properties": {
		"timezone": {
			"type": "string",
			"maxLength": 64,
			"default": "UTC",
			"description": "IANA time zone name such as \"America/New_York\", \"Europe/Paris\" or \"Asia/Tokyo\". Defaults to \"UTC\"."
		}
	},
	"additionalProperties": false
}`)

// Now returns the "now" tool, which reports the current date and time.
// clock is injectable for tests; nil means time.Now.
//
// Zones are looked up with time.LoadLocation, which needs the system's zone
// database; a program that may run without one (minimal containers, some
// Windows installs) should import time/tzdata in its main package.
func Now(clock func() time.Time) dispatch.Tool {
	if clock == nil {
		clock = time.Now
	}
	return dispatch.Tool{
		Spec: hooks.ToolSpec{
			Name: "now",
			Description: "Clock: get the current date and time. Use it to answer \"what time is it\", \"what is today's date\" " +
				"or \"what day of the week is it\", in UTC or any time zone such as \"Europe/Paris\". " +
				"Returns the time (RFC 3339), the date, the weekday and the Unix timestamp.",
			InputSchema: nowSchema,
		},
		Run: func(_ context.Context, raw json.RawMessage) (any, error) {
			return runNow(clock, raw)
		},
	}
}

type nowArgs struct {
	Timezone string `json:"timezone"`
}

type nowResult struct {
	Time     string `json:"time"`
	Date     string `json:"date"`
	Timezone string `json:"timezone"`
	Unix     int64  `json:"unix"`
	Weekday  string `json:"weekday"`
}

func runNow(clock func() time.Time, raw json.RawMessage) (any, error) {
	var args nowArgs
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	loc, err := location(strings.TrimSpace(args.Timezone))
	if err != nil {
		return nil, err
	}
	t := clock().In(loc)
	return nowResult{
		Time:     t.Format(time.RFC3339),
		Date:     t.Format(time.DateOnly),
		Timezone: loc.String(),
		Unix:     t.Unix(),
		Weekday:  t.Weekday().String(),
	}, nil
}

func location(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "UTC") || strings.EqualFold(name, "Z") {
		return time.UTC, nil
	}
	// "Local" would silently answer in the server's zone, which is not
	// what a user asking about their own time means.
	if strings.EqualFold(name, "Local") {
		return nil, fmt.Errorf("time zone %q is ambiguous; give an IANA time zone name such as \"Europe/Berlin\" or \"America/Chicago\"", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q; give an IANA time zone name such as \"Europe/Berlin\", \"America/Chicago\" or \"UTC\"", name)
	}
	return loc, nil
}
