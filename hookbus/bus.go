package hookbus

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// Default deadlines for a plugin call when Options leaves them zero.
const (
	DefaultTimeout     = 2 * time.Second
	DefaultToolTimeout = 10 * time.Second
	// DefaultObserverQueue is how many observer events may wait per plugin
	// before new ones are dropped.
	DefaultObserverQueue = 256
)

// Options are the host's settings for one plugin, from its config entry.
type Options struct {
	// Timeout bounds every hook call; ToolTimeout bounds
	// pre_tool_call_can_provide_result, which does a tool's work.
	Timeout     time.Duration
	ToolTimeout time.Duration
	// FailClosed makes this plugin's own pre_tool_call failures block the
	// call, for guards that must not fail open.
	FailClosed bool
	// AllowToolOverride lets the plugin declare tools outside "<name>__".
	AllowToolOverride bool
	// MaxResultSize bounds what one answer may carry (a provided or
	// transformed result's content, a replacement text, a patch's
	// messages); an answer over it is malformed. 0: DefaultMaxResultSize,
	// the wire's default, so that in-process and remote plugins have the
	// same limit.
	MaxResultSize int
}

// Member is one plugin on the Bus with its options.
type Member struct {
	Plugin  hooks.Plugin
	Options Options
}

// Config tunes a Bus.
type Config struct {
	Logger        hclog.Logger // nil: discard
	ObserverQueue int          // per plugin; 0: DefaultObserverQueue
	// MaxTemperature is the highest sampling temperature the upstream
	// takes (1 for Anthropic); 0 means DefaultMaxTemperature, the widest
	// range of any provider. A patch asking for more is malformed: the
	// provider would refuse the whole call.
	MaxTemperature float64
	// OnCall, when set, is told of every plugin call once it is over (see
	// CallRecord), with the context the call was made with (a worker's for
	// an observer delivery), on the goroutine that made it: it must return
	// at once (queue the record, never write it out there). Nil costs
	// nothing.
	OnCall func(ctx context.Context, c CallRecord)
}

// Bus fires hooks across plugins in priority order.
//
// Lifecycle: New validates every manifest and starts one observer worker
// per plugin that subscribes to an observer hook. Fire methods may then be
// called from any number of goroutines. Flush waits until queued observer
// events are delivered. Close stops accepting observer events, delivers what
// is queued until its context ends, and stops the workers; fire methods
// still work after Close but observer events are dropped and counted.
type Bus struct {
	log     hclog.Logger
	members []*member
	subs    map[hooks.Name][]*subscriber
	tools   []hooks.ToolSpec
	owners  map[string]string // tool name → plugin
	// stretchers says whether any plugin implements hookstretch.Stretcher, so that a
	// Bus without one spends nothing planning stretches.
	stretchers bool
	// maxTemperature is Config.MaxTemperature, checked in every patch.
	maxTemperature float64
	// onCall is Config.OnCall.
	onCall func(context.Context, CallRecord)

	warned sync.Map // warnKey → struct{}

	obsMu       sync.RWMutex // orders emits against Close
	obsClosed   bool
	stop        chan struct{}   // closed by Close: workers drain and return
	workCtx     context.Context // cancelled when Close gives up waiting
	cancelWork  context.CancelFunc
	workers     sync.WaitGroup
	workersDone chan struct{}
	// obsLinger is observerLinger when the Bus was made.
	obsLinger time.Duration
}

type member struct {
	name    string
	plugin  hooks.Plugin
	opts    Options
	inline  bool               // the plugin honours contexts: no watchdog goroutine needed
	queue   chan observerEvent // nil when it observes nothing
	wake    chan struct{}      // cuts its worker's linger short (hurry)
	dropped atomic.Uint64
	// model holds, by model-side stage (hooks.PreCallStage,
	// hooks.PostCallStage), the plugin's hooks of that stage in catalogue
	// order.
	model [hooks.PostCallStage + 1][]*subscriber
}

type subscriber struct {
	m        *member
	hook     hooks.Name
	matchers []string // tool globs, for tool hooks; empty: every tool
	observer bool     // the hook only observes: its answer is not checked
	options  hooks.HookOptions
	timeout  time.Duration
	calls    atomic.Uint64
	fails    [numKinds]atomic.Uint64
}

// ConflictError is two plugins that cannot share a Bus: two with one name
// (Tool empty, Other == Plugin), or two declaring the same tool.
type ConflictError struct {
	Plugin string // the later plugin in priority order
	Other  string // the earlier one
	Tool   string
}

func (e *ConflictError) Error() string {
	if e.Tool == "" {
		return fmt.Sprintf("plugin %q is on the bus twice (enable each plugin once)", e.Plugin)
	}
	return fmt.Sprintf("plugins %q and %q both declare tool %q (disable one, or rename the tool in one of them)", e.Other, e.Plugin, e.Tool)
}

// New builds a Bus over members, highest priority first. It rejects
// invalid manifests, two plugins with one name, and two plugins declaring the
// same tool; the error names the plugins.
func New(members []Member, cfg Config) (*Bus, error) {
	b := &Bus{
		log:            cfg.Logger,
		maxTemperature: cfg.MaxTemperature,
		onCall:         cfg.OnCall,
		subs:           map[hooks.Name][]*subscriber{},
		owners:         map[string]string{},
		stop:           make(chan struct{}),
		workersDone:    make(chan struct{}),
		obsLinger:      observerLinger,
	}
	b.workCtx, b.cancelWork = context.WithCancel(context.Background())
	if b.log == nil {
		b.log = hclog.NewNullLogger()
	}
	queueLen := cfg.ObserverQueue
	if queueLen <= 0 {
		queueLen = DefaultObserverQueue
	}
	seen := map[string]bool{}
	for _, mb := range members {
		man := mb.Plugin.Manifest()
		if err := hooks.ValidateManifest(man, mb.Options.AllowToolOverride); err != nil {
			return nil, err
		}
		if u, ok := mb.Plugin.(hooks.Unserving); ok {
			// Configured already: the hooks it does not serve as configured
			// are not asked (a remote plugin's manifest comes without them).
			man = man.Without(u.Unserved())
		}
		if seen[man.Name] {
			return nil, &ConflictError{Plugin: man.Name, Other: man.Name}
		}
		seen[man.Name] = true
		opts := mb.Options
		if opts.Timeout <= 0 {
			opts.Timeout = DefaultTimeout
		}
		if opts.ToolTimeout <= 0 {
			opts.ToolTimeout = DefaultToolTimeout
		}
		m := &member{name: man.Name, plugin: mb.Plugin, opts: opts}
		if _, ok := mb.Plugin.(hookstretch.Stretcher); ok {
			b.stretchers = true
		}
		if ch, ok := mb.Plugin.(ContextHonouring); ok {
			m.inline = ch.HonoursContext()
		}
		for _, h := range man.Hooks {
			timeout := opts.Timeout
			if h == hooks.PreToolCallCanProvideResult {
				timeout = opts.ToolTimeout
			}
			s := &subscriber{m: m, hook: h, matchers: man.MatchersFor(h), observer: h.Observer(), options: man.HookOptions[h], timeout: timeout}
			b.subs[h] = append(b.subs[h], s)
			if st := h.ModelStage(); st != 0 {
				m.model[st] = append(m.model[st], s)
			}
			if h.Observer() && m.queue == nil {
				m.queue = make(chan observerEvent, queueLen)
				m.wake = make(chan struct{}, 1)
			}
		}
		for _, subs := range m.model {
			// A manifest may list its hooks in any order; a stage asks them
			// in the catalogue's.
			slices.SortFunc(subs, func(a, b *subscriber) int {
				return slices.Index(hooks.Catalogue, a.hook) - slices.Index(hooks.Catalogue, b.hook)
			})
		}
		for _, t := range man.Tools {
			if other, dup := b.owners[t.Name]; dup {
				return nil, &ConflictError{Plugin: man.Name, Other: other, Tool: t.Name}
			}
			b.owners[t.Name] = man.Name
			b.tools = append(b.tools, t)
		}
		b.members = append(b.members, m)
	}
	for _, m := range b.members {
		if m.queue != nil {
			b.workers.Add(1)
			go b.observe(m)
		}
	}
	go func() { b.workers.Wait(); close(b.workersDone) }()
	return b, nil
}

// Plugins returns the plugin names in priority order.
func (b *Bus) Plugins() []string {
	if b == nil {
		return nil
	}
	names := make([]string, len(b.members))
	for i, m := range b.members {
		names[i] = m.name
	}
	return names
}

// Tools returns the tools plugins contribute, in priority order.
func (b *Bus) Tools() []hooks.ToolSpec {
	if b == nil {
		return nil
	}
	return append([]hooks.ToolSpec(nil), b.tools...)
}

// ToolOwner returns the plugin that declared the named tool.
func (b *Bus) ToolOwner(tool string) (string, bool) {
	if b == nil {
		return "", false
	}
	p, ok := b.owners[tool]
	return p, ok
}

// Subscribed reports whether any plugin would be asked hook for tool (tool
// is ignored for hooks that are not per tool).
func (b *Bus) Subscribed(hook hooks.Name, tool string) bool {
	if b == nil {
		return false
	}
	for _, s := range b.subs[hook] {
		if !hook.ToolScoped() || s.matches(tool) {
			return true
		}
	}
	return false
}

func (s *subscriber) matches(tool string) bool {
	if len(s.matchers) == 0 {
		return true
	}
	for _, g := range s.matchers {
		if ok, _ := path.Match(g, tool); ok {
			return true
		}
	}
	return false
}

// Close stops the observer workers after delivering what is queued, or when
// ctx ends, whichever is first; in the second case the deliveries still
// running are cancelled. Later observer events are dropped and counted.
func (b *Bus) Close(ctx context.Context) error {
	if b == nil {
		return nil
	}
	b.obsMu.Lock()
	if !b.obsClosed {
		b.obsClosed = true
		close(b.stop)
	}
	b.obsMu.Unlock()
	select {
	case <-b.workersDone:
		b.cancelWork()
		return nil
	case <-ctx.Done():
		b.cancelWork()
		return fmt.Errorf("host: observer queues not drained: %w", ctx.Err())
	}
}
