// Package offline is the embedded default model: a deterministic demo and
// test model that needs no key and no network. It is not a language model.
// It understands nothing; it matches words, calls at most one tool per user
// message and restates what the tool returned. The same request always gets
// the same response, byte for byte. Sampling and identity settings
// (temperature, top_p, stop, seed, user) are ignored: nothing is sampled,
// so none of them could change the answer.
//
// # Models
//
// Two models differ only in how readily they call a tool and in whether they
// hedge:
//
//   - offline-small (SmallModel) calls a tool only on a strong match and
//     otherwise answers with a hedge that starts "I'm not sure".
//   - offline-large (LargeModel) calls a tool on any match, weak or strong,
//     and never hedges: its text never contains "I'm not sure", "not sure" or
//     "I don't know".
//
// Any other model name is a *llm.ProviderError.
//
// # Which user message counts
//
// The question is the content of the last user message, ignoring any user
// message whose text contains "model answered" or "earlier answer" (any
// case): those carry an earlier model's answer as context, as a router does
// when it reissues a call, and are never scored. System text is never scored
// either. With no user message at all, or only a blank one, the answer is a
// fixed greeting.
//
// # Answering from tool results
//
// If any tool message follows the question, the model answers from results
// and never calls a tool again, so every user message costs at most two
// model calls. The results used are the tool messages after the last
// assistant message with tool calls that follows the question (all tool
// messages after the question when there is no such assistant message).
// Each result becomes one sentence, in order, joined by spaces:
//
//   - a JSON object with a non-empty "error" key, or any result marked
//     IsError, becomes "The tool NAME failed: MESSAGE." (MESSAGE is the
//     error text, the error's "message" member, or "unknown error" when
//     empty);
//   - another JSON object becomes "From NAME: k1: v1; k2: v2." with keys
//     sorted, strings unquoted and other values as compact JSON, or
//     "From NAME: (no data)." when it is empty;
//   - anything else becomes "From NAME: TEXT.", other JSON values compacted,
//     or "From NAME: (no data)." when the content is blank.
//
// NAME is the message's ToolName, else the name of the assistant tool call
// whose ID matches ToolCallID, else "tool". A result longer than 2000
// characters is cut there and ends in "…". When every result is an error,
// offline-small hedges: "I'm not sure — the tool NAME failed: MESSAGE."
//
// # Choosing a tool
//
// Without results, each offered tool is scored against the question.
// Words are lowercased and split on anything that is not a letter or digit;
// stopwords (what, is, the, a, my, me, it, of, to, please, can, you, i, s,
// how, much, many, and similar function words) and numbers are dropped, and
// each word is stemmed crudely: "ies" becomes "y"; "ing" and "ed" are cut; "es"
// is cut after s, x, z, ch or sh; otherwise a final "s" is cut (not after s,
// u or i); then a final "e" is cut. A cut happens only when at least three
// letters remain, so "burned", "burns" and "burn" are all "burn", and
// "times" and "time" are both "tim".
//
// A tool's name words are its name split the same way ("kora__get_burn" is
// kora, get, burn); its description words are its description split the
// same way. Each distinct question word scores 3 if it is a name word, else
// 1 if it is a description word. A question that contains arithmetic (see
// below) also scores 3 for every tool with a required string property for an
// expression (named expression, expr or formula, or described as an
// expression or formula). The best tool has the highest score; ties go to
// the tool listed first.
//
// The best tool's match is strong when its score is at least 3 or when it
// matched every word of the question (so "what time is it" strongly matches
// a tool whose description mentions time), weak when it scores 1 or 2
// without covering the question, and absent at 0.
//
// # Calling a tool
//
// A call is an assistant message with empty content and one tool call with
// ID "call_N_NAME", where N is the number of messages in the request, and
// stop reason tool_use. Its arguments are a JSON object built from the
// tool's input schema; only required properties are filled:
//
//   - a property with an enum gets the first enum value that appears in the
//     question as a whole word (any case), else the first enum value;
//   - an expression property (as above) gets the question's arithmetic, or
//     the whole question when it has none;
//   - a string property named path or file, or whose name ends in path or
//     file, or named filename, gets the first word that looks like a path
//     (it has a letter and either a "/" or a dot followed by a one-to-five
//     character extension, as in go.mod, but not a dotted abbreviation such
//     as e.g), trimmed of quotes, brackets and trailing punctuation, or the
//     whole question when no word does;
//   - any other string, or a property without a type, gets the whole
//     question;
//   - an integer or number gets the schema's default, else its minimum,
//     else 1;
//   - a boolean gets false, an object {}, an array [].
//
// An optional property is included only when it has a default and an enum
// and the question names one of its enum values (say, window "7d").
//
// The arithmetic of a question is its longest run of numbers (exponents
// such as 1.5e3 included), operators (+ - * / % ^), parentheses, commas,
// spaces and the function names sqrt, cbrt, abs, exp, ln, log, log2, log10,
// sin, cos, tan, asin, acos, atan, floor, ceil, round, min, max, pow and pi,
// trimmed of surrounding spaces, commas, dots and unbalanced parentheses. It counts only when it has a digit
// and an operator or function and is not a date such as 2026-01-02:
// "what is 2 + 3 * 4?" has the arithmetic "2 + 3 * 4".
//
// # Answering without a tool
//
// When no tool is called, the stop reason is end_turn and the answer quotes
// the question (whitespace collapsed, cut at 120 characters):
//
//   - offline-small with no tools: I'm not sure I can answer "Q" — I have no
//     tools to use.
//   - offline-small with no match: I'm not sure I can answer "Q" — none of my
//     tools clearly fits.
//   - offline-small with a weak match: I'm not sure I can answer "Q" — NAME
//     only loosely fits.
//   - offline-large with no tools: I have no tools to answer "Q".
//   - offline-large with no match: I have no tool that answers "Q". Tools I
//     can use: A, B, C.
//
// Text that is not meant as a hedge never carries hedging phrases, even
// when they come from the question or a tool result: "not sure" is
// rewritten "unsure" and "don't know" is rewritten "do not know", so a
// router looking for those phrases reacts only to a real hedge.
//
// # Usage
//
// Tokens are estimated at four characters each, rounded up, at least 1:
// input counts the system text, every message's content and every tool
// call's arguments; output counts the answer text and the arguments of the
// call made.
package offline

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

// Model names served by the provider.
const (
	SmallModel = "offline-small"
	LargeModel = "offline-large"
)

const providerName = "offline"

// Provider is the offline model. It holds no state, so one value can serve
// any number of concurrent calls.
type Provider struct{}

// New returns the offline provider.
func New() *Provider { return &Provider{} }

// Name returns "offline".
func (p *Provider) Name() string { return providerName }

var _ llm.Provider = (*Provider)(nil)

// Complete answers one request as the package documentation describes.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, fmt.Errorf("offline: %w", err)
	}
	var large bool
	switch req.Model {
	case SmallModel:
	case LargeModel:
		large = true
	default:
		return llm.Response{}, &llm.ProviderError{
			Provider: providerName,
			Message:  fmt.Sprintf("unknown model %q (use %s or %s)", req.Model, SmallModel, LargeModel),
		}
	}

	msg, stop := decide(req, large)
	return llm.Response{
		Model:      req.Model,
		Message:    msg,
		Usage:      usage(req, msg),
		StopReason: stop,
	}, nil
}

const greeting = "Hello! I am the offline demo model. Ask me something one of my tools can answer."

func decide(req llm.Request, large bool) (llm.Message, hooks.StopReason) {
	q := lastQuestion(req.Messages)
	if q < 0 || strings.TrimSpace(req.Messages[q].Content) == "" {
		return answer(greeting), hooks.StopEndTurn
	}
	question := strings.TrimSpace(req.Messages[q].Content)

	if results := currentResults(req.Messages, q); len(results) > 0 {
		text, hedge := fromResults(req.Messages, results, large)
		if !hedge {
			text = dehedge(text)
		}
		return answer(text), hooks.StopEndTurn
	}

	best, strength := bestTool(question, req.Tools)
	if strength == strong || (large && strength == weak) {
		tool := req.Tools[best]
		call := llm.ToolCall{
			ID:        fmt.Sprintf("call_%d_%s", len(req.Messages), tool.Name),
			Name:      tool.Name,
			Arguments: arguments(question, tool.InputSchema),
		}
		return llm.Message{Role: hooks.RoleAssistant, ToolCalls: []llm.ToolCall{call}}, hooks.StopToolUse
	}

	quoted := quote(question)
	var text string
	switch {
	case large && len(req.Tools) == 0:
		text = dehedge(fmt.Sprintf("I have no tools to answer %s.", quoted))
	case large:
		names := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			names[i] = t.Name
		}
		text = dehedge(fmt.Sprintf("I have no tool that answers %s. Tools I can use: %s.", quoted, strings.Join(names, ", ")))
	case len(req.Tools) == 0:
		text = fmt.Sprintf("I'm not sure I can answer %s — I have no tools to use.", quoted)
	case strength == weak:
		text = fmt.Sprintf("I'm not sure I can answer %s — %s only loosely fits.", quoted, req.Tools[best].Name)
	default:
		text = fmt.Sprintf("I'm not sure I can answer %s — none of my tools clearly fits.", quoted)
	}
	return answer(text), hooks.StopEndTurn
}

func answer(text string) llm.Message {
	return llm.Message{Role: hooks.RoleAssistant, Content: text}
}

// lastQuestion returns the index of the last user message that is not a
// context note, or -1.
func lastQuestion(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == hooks.RoleUser && !isContextNote(msgs[i].Content) {
			return i
		}
	}
	return -1
}

// isContextNote spots the message a router adds when it reissues a call with
// an earlier answer in context; scoring that text would match tools against
// the earlier answer instead of the question.
func isContextNote(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "model answered") || strings.Contains(l, "earlier answer")
}

// currentResults returns the indexes of the tool messages that answer the
// latest round of calls made for the question at index q.
func currentResults(msgs []llm.Message, q int) []int {
	from := q
	for i := len(msgs) - 1; i > q; i-- {
		if msgs[i].Role == hooks.RoleAssistant && len(msgs[i].ToolCalls) > 0 {
			from = i
			break
		}
	}
	collect := func(after int) []int {
		var out []int
		for i := after + 1; i < len(msgs); i++ {
			if msgs[i].Role == hooks.RoleTool {
				out = append(out, i)
			}
		}
		return out
	}
	if out := collect(from); len(out) > 0 {
		return out
	}
	// Results of an earlier round still mean the question was worked on;
	// calling again could loop forever.
	return collect(q)
}

const maxQuote = 120

func quote(question string) string {
	s := strings.Join(strings.Fields(question), " ")
	if utf8.RuneCountInString(s) > maxQuote {
		s = string([]rune(s)[:maxQuote]) + "…"
	}
	return `"` + s + `"`
}

var (
	notSure  = regexp.MustCompile(`(?i)not\s+sure`)
	dontKnow = regexp.MustCompile(`(?i)don['’]t\s+know`)
)

func dehedge(s string) string {
	s = notSure.ReplaceAllString(s, "unsure")
	return dontKnow.ReplaceAllString(s, "do not know")
}

func usage(req llm.Request, out llm.Message) llm.Usage {
	in := utf8.RuneCountInString(req.System)
	for _, m := range req.Messages {
		in += utf8.RuneCountInString(m.Content)
		for _, c := range m.ToolCalls {
			in += utf8.RuneCount(c.Arguments)
		}
	}
	o := utf8.RuneCountInString(out.Content)
	for _, c := range out.ToolCalls {
		o += utf8.RuneCount(c.Arguments)
	}
	return llm.Usage{InputTokens: tokens(in), OutputTokens: tokens(o)}
}

func tokens(chars int) int {
	return max(1, (chars+3)/4)
}
