package main

import (
	"bytes"
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// config is the cache's [plugins.entries.cache.config] table.
type config struct {
	// Tools are the names (or path.Match globs) of the tools whose results
	// may be reused. Only list tools whose answer depends on nothing but
	// their arguments, for at least ttl.
	Tools      []string `json:"tools"`
	TTL        string   `json:"ttl"`         // how long an entry is served; Go duration
	MaxEntries int      `json:"max_entries"` // least recently used entries go first

	ttl time.Duration
}

const (
	defaultTTL        = 30 * time.Second
	defaultMaxEntries = 256
)

func parseConfig(raw json.RawMessage) (config, error) {
	c := config{MaxEntries: defaultMaxEntries}
	if err := sdk.DecodeConfig(raw, &c); err != nil {
		return config{}, err
	}
	if len(c.Tools) == 0 {
		// No default: which tools are safe to cache is the operator's call.
		return config{}, errors.New(`tools: list the read-only tools to cache, such as tools = ["read_file", "calculate"]`)
	}
	for i, g := range c.Tools {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return config{}, fmt.Errorf("tools[%d]: %q is not a tool name or glob", i, g)
		}
	}
	c.ttl = defaultTTL
	if c.TTL != "" {
		d, err := time.ParseDuration(c.TTL)
		if err != nil || d <= 0 {
			return config{}, fmt.Errorf("ttl: %q is not a positive duration (use Go durations such as \"30s\" or \"5m\")", c.TTL)
		}
		c.ttl = d
	}
	if c.MaxEntries < 1 {
		return config{}, fmt.Errorf("max_entries: %d, want at least 1", c.MaxEntries)
	}
	return c, nil
}

// key identifies a call: the tool and its arguments re-encoded with sorted
// keys and no insignificant space, so that {"a":1, "b":2} and {"b":2,"a":1}
// share an entry. Arguments that are not JSON are used as they are.
func key(tool string, args json.RawMessage) string {
	canon := string(args)
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber() // 1e400 or a 20-digit id must not be rounded into another key
	var v any
	if dec.Decode(&v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = string(b)
		}
	}
	return tool + "\x00" + canon
}

// store is a size-bounded LRU of tool results whose entries expire.
type store struct {
	max int
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	items map[string]*list.Element
	lru   *list.List // of *entry, most recently used first
}

type entry struct {
	key     string
	result  hooks.ToolResult
	expires time.Time
}

func newStore(max int, ttl time.Duration, now func() time.Time) *store {
	return &store{max: max, ttl: ttl, now: now, items: map[string]*list.Element{}, lru: list.New()}
}

func (s *store) get(k string) (hooks.ToolResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.items[k]
	if !ok {
		return hooks.ToolResult{}, false
	}
	e := el.Value.(*entry)
	if !s.now().Before(e.expires) {
		s.lru.Remove(el)
		delete(s.items, k)
		return hooks.ToolResult{}, false
	}
	s.lru.MoveToFront(el)
	return e.result, true
}

func (s *store) put(k string, r hooks.ToolResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	expires := s.now().Add(s.ttl)
	if el, ok := s.items[k]; ok {
		e := el.Value.(*entry)
		e.result, e.expires = r, expires
		s.lru.MoveToFront(el)
		return
	}
	s.items[k] = s.lru.PushFront(&entry{key: k, result: r, expires: expires})
	for s.lru.Len() > s.max {
		oldest := s.lru.Back()
		s.lru.Remove(oldest)
		delete(s.items, oldest.Value.(*entry).key)
	}
}

func (s *store) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}
