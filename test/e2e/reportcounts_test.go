package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// recordingCounts are a recording's figures, counted here from its NDJSON, apart from the
// report's code: what the page must show.
type recordingCounts struct {
	Series   map[string]map[string]int // resource -> series -> object events
	Markers  map[string]int            // marker type -> lines
	Restarts int
	Queues   map[string]queueCount // scraped: url + " " + name
	Sim      map[string]queueCount // simulated: resource
	History  map[string][]string   // "resource ns/name" -> type:resourceVersion of its lines
	// Lanes are the ControllerReconcile lines by controller and result.
	Lanes map[string]map[string]int
}

type queueCount struct {
	Lines int
	Max   float64
}

func resourceName(m map[string]any) string {
	res, _ := m["resource"].(string)
	if g, _ := m["group"].(string); g != "" {
		res += "." + g
	}
	return res
}

func countRecording(t *testing.T, path string) recordingCounts {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := recordingCounts{Series: map[string]map[string]int{}, Markers: map[string]int{}, Queues: map[string]queueCount{},
		Sim: map[string]queueCount{}, History: map[string][]string{}, Lanes: map[string]map[string]int{}}
	watched := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("the recording has a damaged line: %v", err)
		}
		typ, _ := m["type"].(string)
		res := resourceName(m)
		key := fmt.Sprintf("%s %v/%v", res, m["namespace"], m["name"])
		if q, ok := m["queue"].(map[string]any); ok && res != "" {
			s := c.Sim[res]
			s.Lines++
			s.Max = math.Max(s.Max, q["depth"].(float64))
			c.Sim[res] = s
		}
		switch typ {
		case "Informer":
			clear(watched)
		case "Added", "Updated", "Deleted":
			series := "updated"
			switch {
			case m["initialList"] == true:
				series = "initial"
			case m["tombstone"] == true || m["delta"] == "Replaced":
				series = "relist"
			case m["delta"] == "Sync":
				series = "resync"
			case typ == "Added":
				series = "added"
			case typ == "Deleted":
				series = "deleted"
			}
			if c.Series[res] == nil {
				c.Series[res] = map[string]int{}
			}
			c.Series[res][series]++
			c.History[key] = append(c.History[key], typ+":"+m["resourceVersion"].(string))
		case "HotLoop", "HotLoopEnded":
			c.Markers[typ]++
			c.History[key] = append(c.History[key], typ+":")
		case "Error":
			if m["verb"] == "scrape" {
				c.Markers["ScrapeError"]++
			} else {
				c.Markers["Error"]++
			}
		case "Watch":
			c.Markers[typ]++
			if watched[res] {
				c.Restarts++
			}
			watched[res] = true
		case "WatchClosed", "Relist", "Synced":
			c.Markers[typ]++
		case "ControllerReconcile":
			ctrl, result := m["controller"].(string), m["result"].(string)
			if c.Lanes[ctrl] == nil {
				c.Lanes[ctrl] = map[string]int{}
			}
			c.Lanes[ctrl][result]++
			if res != "" {
				c.History[key] = append(c.History[key], typ+":")
			}
		case "ControllerQueue":
			if name, ok := m["name"].(string); ok {
				k := m["url"].(string) + " " + name
				q := c.Queues[k]
				q.Lines++
				q.Max = math.Max(q.Max, m["depth"].(float64))
				c.Queues[k] = q
			}
		}
	}
	return c
}

// pageCounts reads the same figures from the page's DOM.
const pageCounts = `(() => {
  const out = {Series: {}, Markers: {}, Restarts: 0, Queues: {}, Sim: {}, History: {}, Lanes: {}};
  document.querySelectorAll(".row.lane").forEach(row => {
    const l = out.Lanes[row.dataset.controller] = {};
    row.querySelectorAll("rect.rc").forEach(b => { l[b.dataset.result] = (l[b.dataset.result] || 0) + Number(b.dataset.count); });
  });
  document.querySelectorAll(".row.timeline").forEach(row => {
    const r = row.dataset.resource;
    row.querySelectorAll("rect.bar").forEach(b => {
      out.Series[r] = out.Series[r] || {};
      out.Series[r][b.dataset.series] = (out.Series[r][b.dataset.series] || 0) + Number(b.dataset.count);
    });
  });
  document.querySelectorAll("g.marker").forEach(m => {
    out.Markers[m.dataset.type] = (out.Markers[m.dataset.type] || 0) + 1;
    if (m.dataset.restart === "true") out.Restarts++;
  });
  document.querySelectorAll(".row.queue").forEach(row => {
    row.querySelectorAll("path.depth").forEach(p => {
      const q = {Lines: Number(p.dataset.lines), Max: Number(p.dataset.max)};
      if (row.dataset.kind === "scraped") out.Queues[p.dataset.url + " " + p.dataset.queue.split(" (controller ")[0]] = q;
      else out.Sim[p.dataset.queue] = q;
    });
  });
  return out;
})()`
