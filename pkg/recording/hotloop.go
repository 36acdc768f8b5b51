package recording

import (
	"encoding/json"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// HotLoop is the type of a hot-loop report (watch.HotLoop): one object rewritten too often, or
// two managers taking turns at it (docs/json.md). The analysis step makes it.
const HotLoop = watch.HotLoop

// HotLoopEnded is the type of the line that closes a HotLoop (watch.HotLoopEnded): a whole
// window passed without an update to the object, or it was deleted (docs/json.md).
const HotLoopEnded = watch.HotLoopEnded

// managerNames are a hot loop's managers on its line: a list of names (on Updated lines,
// "managers" are objects). The wire type of watch.HotLoopInfo.Managers (lines.go).
type managerNames []string

// UnmarshalJSON reads a list of strings; null is none.
func (m *managerNames) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*m = nil
		return nil
	}
	if err := json.Unmarshal(b, (*[]string)(m)); err != nil {
		return &fieldError{field: "managers", want: "an array of strings", onLine: true}
	}
	return nil
}
