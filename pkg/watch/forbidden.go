package watch

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/shell"
)

// skipForbidden makes a forbidden initial list stop this informer alone, after one Error event
// that names it; it returns the informer's context.
func (ri *resourceInformer) skipForbidden(ctx context.Context) context.Context {
	ictx, stop := context.WithCancel(ctx)
	var once sync.Once
	ri.forbidden = func(err *ForbiddenError) {
		once.Do(func() {
			ri.emit(ctx, Event{Type: Error, Lifecycle: LifecycleInfo{Verb: err.Verb, Reason: "Forbidden", Message: err.Error()}})
			stop()
		})
	}
	return ictx
}

// forbiddanceGrace bounds how long a run that met a forbidden initial list waits for its other
// resources' first answers, so that every forbidden one can be named.
const forbiddanceGrace = 5 * time.Second

// forbiddance ends a run whose initial list was forbidden. It does not stop at the first
// resource refused: it waits until every informer had an answer from the server (or
// forbiddanceGrace passed), so that the error names every forbidden resource, as kubectl get
// prints one line for each.
type forbiddance struct {
	ctx       context.Context
	informers []*resourceInformer
	cancel    context.CancelFunc

	mu      sync.Mutex
	errs    map[*resourceInformer]*ForbiddenError
	started bool
	done    chan struct{}
	fatal   error
}

// add takes a forbidden initial list; the first one starts the wait for the others.
func (f *forbiddance) add(ri *resourceInformer, err *ForbiddenError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.errs == nil {
		f.errs = map[*resourceInformer]*ForbiddenError{}
	}
	if _, ok := f.errs[ri]; !ok {
		f.errs[ri] = err
	}
	if f.started {
		return
	}
	f.started, f.done = true, make(chan struct{})
	go f.end()
}

// end waits for every informer's first answer, then ends the run with every forbidden one.
func (f *forbiddance) end() {
	defer close(f.done)
	deadline := time.NewTimer(forbiddanceGrace)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !f.allAnswered() {
		select {
		case <-tick.C:
		case <-deadline.C:
			f.finish()
			return
		case <-f.ctx.Done(): // interrupted: what is known is said
			f.finish()
			return
		}
	}
	f.finish()
}

func (f *forbiddance) allAnswered() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ri := range f.informers {
		if _, forbidden := f.errs[ri]; !forbidden && !ri.answered.Load() {
			return false
		}
	}
	return true
}

func (f *forbiddance) finish() {
	f.mu.Lock()
	var errs ForbiddenErrors
	for _, ri := range f.informers { // in the order the resources were given
		if e, ok := f.errs[ri]; ok {
			errs = append(errs, e)
		}
	}
	if len(errs) == 1 {
		f.fatal = errs[0]
	} else {
		f.fatal = errs
	}
	f.mu.Unlock()
	f.cancel()
}

// wait returns the run's error once the informers stopped: nil, or the forbidden lists.
func (f *forbiddance) wait() error {
	f.mu.Lock()
	done := f.done
	f.mu.Unlock()
	if done == nil {
		return nil
	}
	<-done
	return f.fatal
}

// ForbiddenErrors are the forbidden initial lists of a run of several resources, in the order
// the resources were given. Unwrap gives each; printed, they are one line each.
type ForbiddenErrors []*ForbiddenError

func (e ForbiddenErrors) Error() string {
	lines := make([]string, len(e))
	for i, fe := range e {
		lines[i] = fe.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns each resource's error.
func (e ForbiddenErrors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, fe := range e {
		errs[i] = fe
	}
	return errs
}

// ForbiddenError is a list or watch the user may not make, before the informer ever synced, or
// (BadRequest) one the server refused as bad: no retry would mend either.
type ForbiddenError struct {
	Resource  string
	Namespace string // "" for all namespaces or cluster-scoped
	Verb      string // list or watch ("" when only the reflector's error handler saw it)
	Message   string // the server's words
	// BadRequest: the server refused the request as bad (400), not as forbidden: a
	// --field-selector field it does not support.
	BadRequest bool
}

func (e *ForbiddenError) Error() string {
	verb := e.Verb
	if verb == "" {
		verb = "list"
	}
	if e.BadRequest {
		scope := ""
		if e.Namespace != "" {
			scope = fmt.Sprintf(" in namespace %q", e.Namespace)
		}
		return fmt.Sprintf("cannot %s %s%s: Error from server (BadRequest): %s (check --field-selector and --selector)", verb, e.Resource, scope, e.Message)
	}
	var scope, check string
	if e.Namespace != "" {
		scope = fmt.Sprintf(" in namespace %q", e.Namespace)
		res, ns := shell.Quote(e.Resource), shell.Quote(e.Namespace)
		check = fmt.Sprintf("kubectl auth can-i list %s -n %s && kubectl auth can-i watch %s -n %s", res, ns, res, ns)
	} else {
		check = "kubectl auth can-i list " + shell.Quote(e.Resource) + " --all-namespaces && kubectl auth can-i watch " + shell.Quote(e.Resource) + " --all-namespaces"
	}
	return fmt.Sprintf("cannot %s %s%s: %s (check with: %s)", verb, e.Resource, scope, e.Message, check)
}
