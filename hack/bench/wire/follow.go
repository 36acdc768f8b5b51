package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// resource names what the stream is of, for the Synced line.
type resource struct{ group, version, plural string }

// follow reads frames until the stream ends. Before the BOOKMARK that ends the initial events
// it only counts the frames of objects; at that bookmark it writes one line in the shape of
// the plugin's -o json Synced line, with items the frames counted:
//
//	{"type":"Synced","group":"","version":"v1","resource":"configmaps","items":20000}
//
// After it, one line per event, its type and the object's namespace/name, found by stepping
// over the frame's fields, not by decoding it: "MODIFIED bench/bench-000042". Every line is
// written as it comes. An ERROR event ends it with an error.
func follow(fr *frameReader, out io.Writer, res resource) error {
	var line []byte
	items, synced := 0, false
	for {
		frame, err := fr.next()
		if err != nil {
			return err
		}
		typ := eventType(frame)
		switch {
		case bytes.Equal(typ, errorTyp):
			return fmt.Errorf("the watch sent an ERROR event (%d bytes)", len(frame))
		case bytes.Equal(typ, bookmark):
			if synced || !initialEventsEnd(frame) {
				continue
			}
			synced = true
			rec := struct {
				Type     string `json:"type"`
				Group    string `json:"group"`
				Version  string `json:"version"`
				Resource string `json:"resource"`
				Items    int    `json:"items"`
			}{"Synced", res.group, res.version, res.plural, items}
			if line, err = json.Marshal(rec); err != nil {
				return err
			}
			line = append(line, '\n')
		case !synced:
			items++
			continue
		default:
			ns, name, ok := objectKey(frame)
			if !ok {
				return fmt.Errorf("a %s event whose object has no name (%d bytes)", typ, len(frame))
			}
			line = append(append(append(append(append(line[:0], typ...), ' '), ns...), '/'), name...)
			line = append(line, '\n')
		}
		// One write per line: a pipe sees each as it comes.
		if _, err := out.Write(line); err != nil {
			return err
		}
	}
}
