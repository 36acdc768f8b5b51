package recording

import "encoding/json"

// queueName is the Informer line's queue: the delta queue's name (on object lines, "queue" is
// the workqueue's figures).
type queueName string

// UnmarshalJSON reads a string; null is none.
func (q *queueName) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if err := json.Unmarshal(b, (*string)(q)); err != nil {
		return &fieldError{field: "queue", want: "a string on an Informer line"}
	}
	return nil
}
