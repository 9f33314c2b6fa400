// The WebSocket subscribers of bench/ws.mjs, as one compiled process: on a 2-core machine the
// subscribers share the cores with the service, and Node's `ws` clients took ~40 ms of CPU per 1000
// events, as much as the service itself (bench/README.md "Issue 27"). These take a fraction of it,
// so the bench measures the service's delivery rather than its own clients.
//
// Built and driven by bench/ws.mjs (`--subscriber-client go`), with Debian's Go and its packaged
// Gorilla WebSocket (no download):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o <bin> bench/subscribers/main.go
//	<bin> -url ws://127.0.0.1:PORT/api/v1/ws -keys FILE [-concurrency 200]
//
// Commands on stdin, one a line; every answer is one JSON line on stdout:
//
//	open                      connect every key (its own Authorization header), each waiting for
//	                          `authenticated`; answers {"open":n,"failed":m,"error":"..."}
//	subscribe                 subscribes every open connection to `account` from 0; answers
//	                          {"subscribed":n,"closed":m,"held":[indexes],"closed_reasons":{reason:n}}
//	                          once every one answered or closed (held: subscribed and still open)
//	wait TYPE                 answers {"has":TYPE} once every open subscriber has had an event of TYPE
//	report FILE               writes one JSON line per subscriber (its index, arrivals as
//	                          [unix ms, id, type] triples, whole frames of one in CHECKED, how it
//	                          closed) to FILE; answers {"reported":n}
//	quit                      closes every connection and exits
//
// An arrival is stamped (wall clock, ms) when its frame is read, before anything else is done with it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// One subscriber in CHECKED keeps its frames whole (bench/ws.mjs parses them as JSON).
const CHECKED = 100

// An account event's frame as the service writes it: its id and type first.
var frameHead = regexp.MustCompile(`^\{"channel":"account","event":\{"id":(\d+),"type":"([^"]+)"`)

type sub struct {
	i      int
	conn   *websocket.Conn
	mu     sync.Mutex
	got    []float64 // arrival ms, id, type index
	types  map[int]bool
	frames []string
	closed string
	subbed bool
	failed bool
}

var (
	typeNames   []string
	typeIndex   = map[string]int{}
	typeMu      sync.Mutex
	subscribed  int64
	closedCount int64
)

func typeOf(name string) int {
	typeMu.Lock()
	defer typeMu.Unlock()
	if i, ok := typeIndex[name]; ok {
		return i
	}
	typeIndex[name] = len(typeNames)
	typeNames = append(typeNames, name)
	return len(typeNames) - 1
}

func nowMs() float64 { return float64(time.Now().UnixNano()) / 1e6 }

func answer(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

// read runs for the connection's life: stamps and records every frame.
func (s *sub) read(authed chan<- error) {
	first := true
	for {
		_, msg, err := s.conn.ReadMessage()
		t := nowMs()
		if err != nil {
			s.mu.Lock()
			s.closed = err.Error()
			s.mu.Unlock()
			atomic.AddInt64(&closedCount, 1)
			if first {
				authed <- err
			}
			return
		}
		text := string(msg)
		if strings.HasPrefix(text, `{"channel"`) {
			m := frameHead.FindStringSubmatch(text)
			id, ty := -1.0, -1
			if m != nil {
				n, _ := strconv.ParseFloat(m[1], 64)
				id, ty = n, typeOf(m[2])
			}
			s.mu.Lock()
			s.got = append(s.got, t, id, float64(ty))
			s.types[ty] = true
			if s.i%CHECKED == 0 {
				s.frames = append(s.frames, text)
			}
			s.mu.Unlock()
			continue
		}
		var op struct {
			Op string `json:"op"`
		}
		_ = json.Unmarshal(msg, &op)
		switch op.Op {
		case "authenticated":
			if first {
				first = false
				authed <- nil
			}
		case "subscribed":
			s.mu.Lock()
			if !s.subbed {
				s.subbed = true
				atomic.AddInt64(&subscribed, 1)
			}
			s.mu.Unlock()
		}
	}
}

func main() {
	url := flag.String("url", "", "the service's WebSocket URL")
	keysFile := flag.String("keys", "", "a file of API keys, one a line")
	concurrency := flag.Int("concurrency", 200, "connections opened at once")
	flag.Parse()
	raw, err := os.ReadFile(*keysFile)
	if err != nil {
		answer(map[string]string{"error": err.Error()})
		os.Exit(1)
	}
	var keys []string
	for _, k := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if k != "" {
			keys = append(keys, k)
		}
	}
	var subs []*sub
	dialer := websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 1024}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd := strings.Fields(in.Text())
		if len(cmd) == 0 {
			continue
		}
		switch cmd[0] {
		case "open":
			subs = make([]*sub, len(keys))
			var next int64 = -1
			var failed int64
			var firstErr atomic.Value
			var wg sync.WaitGroup
			for w := 0; w < *concurrency; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(atomic.AddInt64(&next, 1))
						if i >= len(keys) || atomic.LoadInt64(&failed) > 0 {
							return
						}
						h := http.Header{}
						h.Set("Authorization", "Bearer "+keys[i])
						conn, _, err := dialer.Dial(*url, h)
						if err != nil {
							atomic.AddInt64(&failed, 1)
							firstErr.CompareAndSwap(nil, fmt.Sprintf("subscriber %d: %v", i, err))
							return
						}
						s := &sub{i: i, conn: conn, types: map[int]bool{}}
						authed := make(chan error, 1)
						go s.read(authed)
						select {
						case err := <-authed:
							if err != nil {
								atomic.AddInt64(&failed, 1)
								firstErr.CompareAndSwap(nil, fmt.Sprintf("subscriber %d: %v", i, err))
								s.failed = true
							}
						case <-time.After(30 * time.Second):
							atomic.AddInt64(&failed, 1)
							firstErr.CompareAndSwap(nil, fmt.Sprintf("subscriber %d: no authenticated within 30 s", i))
							s.failed = true
						}
						subs[i] = s
					}
				}()
			}
			wg.Wait()
			open := 0
			for _, s := range subs {
				if s != nil && !s.failed {
					open++
				}
			}
			e, _ := firstErr.Load().(string)
			answer(map[string]any{"open": open, "failed": failed, "error": e})
		case "subscribe":
			want := 0
			for _, s := range subs {
				if s == nil || s.failed {
					continue
				}
				want++
				_ = s.conn.WriteMessage(websocket.TextMessage, []byte(`{"op":"subscribe","channels":["account"],"after":0}`))
			}
			deadline := time.Now().Add(120 * time.Second)
			for atomic.LoadInt64(&subscribed)+atomic.LoadInt64(&closedCount) < int64(want) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			held := []int{}
			reasons := map[string]int{}
			for _, s := range subs {
				if s == nil || s.failed {
					continue
				}
				s.mu.Lock()
				if s.subbed && s.closed == "" {
					held = append(held, s.i)
				} else if s.closed != "" {
					reasons[s.closed]++
				}
				s.mu.Unlock()
			}
			answer(map[string]any{"subscribed": atomic.LoadInt64(&subscribed), "closed": atomic.LoadInt64(&closedCount), "held": held, "closed_reasons": reasons})
		case "wait":
			if len(cmd) < 2 {
				answer(map[string]string{"error": "wait TYPE"})
				continue
			}
			ty := typeOf(cmd[1])
			go func(name string) {
				for {
					all := true
					for _, s := range subs {
						if s == nil || s.failed {
							continue
						}
						s.mu.Lock()
						has := s.types[ty] || s.closed != ""
						s.mu.Unlock()
						if !has {
							all = false
							break
						}
					}
					if all {
						answer(map[string]string{"has": name})
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}(cmd[1])
		case "report":
			if len(cmd) < 2 {
				answer(map[string]string{"error": "report FILE"})
				continue
			}
			f, err := os.Create(cmd[1])
			if err != nil {
				answer(map[string]string{"error": err.Error()})
				continue
			}
			w := bufio.NewWriter(f)
			n := 0
			typeMu.Lock()
			names := append([]string(nil), typeNames...)
			typeMu.Unlock()
			for _, s := range subs {
				if s == nil || s.failed {
					continue
				}
				s.mu.Lock()
				got := make([]any, 0, len(s.got))
				for k := 0; k < len(s.got); k += 3 {
					ty := any(nil)
					if s.got[k+2] >= 0 {
						ty = names[int(s.got[k+2])]
					}
					got = append(got, s.got[k], s.got[k+1], ty)
				}
				line, _ := json.Marshal(map[string]any{"i": s.i, "got": got, "frames": s.frames, "closed": s.closed})
				s.mu.Unlock()
				w.Write(line)
				w.WriteByte('\n')
				n++
			}
			w.Flush()
			f.Close()
			answer(map[string]int{"reported": n})
		case "quit":
			for _, s := range subs {
				if s != nil {
					s.conn.Close()
				}
			}
			os.Exit(0)
		}
	}
}
