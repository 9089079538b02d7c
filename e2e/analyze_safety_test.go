//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/e2e/stack"
)

// witness is what analysis must never touch, and the counters that would show it did: a
// directory with files (deleted or changed?), a file with a marker line (its content in an
// answer?), a named pipe (opened? its writer is let through only by a reader), and a TCP
// listener on 127.0.0.1 standing for an HDFS name node and a jar server (connected to?).
type witness struct {
	victim, secret, pipe string
	port                 int
	victimBefore         []string
	opened, connections  atomic.Int32
	closing              atomic.Bool
	ln                   net.Listener
}

const secretMarker = "colline_secret_column_7f3a"

func newWitness(t *testing.T) *witness {
	t.Helper()
	dir := t.TempDir()
	w := &witness{victim: filepath.Join(dir, "victim"), secret: filepath.Join(dir, "secret.csv"), pipe: filepath.Join(dir, "secret.pipe")}
	for _, f := range []string{"victim/precious.txt", "victim/sub/more.txt"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("precious\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(w.secret, []byte(secretMarker+",b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(w.pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(w.pipe, os.O_WRONLY, 0) // blocks until a reader opens the pipe
		if err != nil {
			return
		}
		if !w.closing.Load() {
			w.opened.Add(1)
		}
		_, _ = f.WriteString(secretMarker + ",b\n")
		f.Close()
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.ln, w.port = ln, ln.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			w.connections.Add(1)
			c.Close()
		}
	}()
	w.victimBefore = tree(t, w.victim)
	t.Cleanup(func() {
		w.closing.Store(true)
		ln.Close()
		if f, err := os.OpenFile(w.pipe, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil { // lets the pipe's writer end
			f.Close()
		}
	})
	return w
}

// sub fills in the witness's paths and URLs.
func (w *witness) sub(sql string) string {
	return strings.NewReplacer("VICTIM", w.victim, "SECRET", w.secret, "PIPE", w.pipe,
		"HDFS", fmt.Sprintf("hdfs://127.0.0.1:%d", w.port), "REMOTE", fmt.Sprintf("http://127.0.0.1:%d", w.port)).Replace(sql)
}

// check fails t if anything was touched; answers are every answer's body.
func (w *witness) check(t *testing.T, answers string) {
	t.Helper()
	if after := tree(t, w.victim); strings.Join(after, "\n") != strings.Join(w.victimBefore, "\n") {
		t.Errorf("%s changed:\nbefore:\n%s\nafter:\n%s", w.victim, strings.Join(w.victimBefore, "\n"), strings.Join(after, "\n"))
	}
	if strings.Contains(answers, secretMarker) {
		t.Errorf("an answer holds the content of %s", w.secret)
	}
	if n := w.opened.Load(); n != 0 {
		t.Errorf("the analyzer opened %s", w.pipe)
	}
	if n := w.connections.Load(); n != 0 {
		t.Errorf("the analyzer connected %d time(s) to 127.0.0.1:%d (the test's hdfs:// and http:// listener)", n, w.port)
	}
}

// finding is a script of issue 27 and the outcome of each of its statements ("refused", "error",
// "event", "skipped"; "applied"/"unapplied" for a statement that defines something); draws says
// whether the explorer's SQL panel (which sends no reads) has lineage to draw.
type finding struct {
	name  string
	sql   string
	reads bool
	want  []string
	draws bool
}

var findings = []finding{
	{"delete-location", `CREATE DATABASE vdb LOCATION "VICTIM"; CREATE TABLE vdb.t (a INT) USING parquet`, false, []string{"applied", "applied"}, false},
	{"delete-location-drop", `CREATE DATABASE vdb LOCATION "VICTIM"; CREATE TABLE vdb.t (a INT) USING parquet LOCATION "VICTIM/sub";
INSERT INTO vdb.t SELECT 1; DROP TABLE vdb.t; DROP DATABASE vdb CASCADE`, false, []string{"applied", "applied", "event", "applied", "applied"}, true},
	{"read-view", `CREATE TEMPORARY VIEW v USING csv OPTIONS(path "SECRET", header "true");
CREATE TABLE default.leak2 USING parquet AS SELECT * FROM v`, false, []string{"refused", "error"}, false},
	{"read-view-pipe", `CREATE TEMPORARY VIEW v USING csv OPTIONS(path "PIPE", header "true", sep "\u0001");
CREATE TABLE default.leak2 USING parquet AS SELECT * FROM v`, false, []string{"refused", "error"}, false},
	{"read-path", "SELECT * FROM csv.`SECRET`; SELECT * FROM csv.`PIPE`; INSERT INTO TABLE default.nope SELECT * FROM json.`PIPE`", true,
		[]string{"refused", "refused", "refused"}, false},
	{"read-table", `CREATE TABLE default.r (a STRING) USING csv OPTIONS (path "PIPE"); SELECT * FROM default.r;
INSERT INTO default.r SELECT * FROM default.r`, true, []string{"applied", "event", "event"}, true},
	{"hdfs", "SELECT * FROM parquet.`HDFS/x`; CREATE TEMPORARY VIEW hv USING parquet OPTIONS (path 'HDFS/x');" +
		"CREATE TABLE default.h (a INT) USING parquet LOCATION 'HDFS/x'; INSERT INTO default.h SELECT 1; SELECT * FROM default.h;" +
		"CREATE DATABASE hd LOCATION 'HDFS/db'; CREATE TABLE hd.t (a INT) USING parquet; LOAD DATA INPATH 'HDFS/f' INTO TABLE hd.t;" +
		"INSERT OVERWRITE DIRECTORY 'HDFS/out' USING parquet SELECT a FROM hd.t; SET fs.defaultFS = HDFS", true,
		[]string{"refused", "refused", "applied", "event", "event", "applied", "applied", "event", "event", "unapplied"}, false},
	{"jars", "ADD JAR 'REMOTE/x.jar'; CREATE FUNCTION f AS 'org.example.F' USING JAR 'REMOTE/x.jar'; SELECT f(1);" +
		"CREATE TEMPORARY FUNCTION g AS 'org.example.G' USING JAR 'REMOTE/g.jar'; ADD FILE 'REMOTE/f'; ADD ARCHIVE 'REMOTE/a.zip'", true,
		[]string{"refused", "refused", "error", "refused", "refused", "refused"}, false},
}

// outcomeOf is a statement's outcome in the words of finding.want.
func outcomeOf(st analyze.Statement) string {
	switch {
	case st.Applied != nil && *st.Applied:
		return "applied"
	case st.Applied != nil:
		return "unapplied"
	}
	return st.Outcome
}

// TestAnalyzeFindings sends each finding of issue 27 to the real analyzer service of each CI
// Spark line, then through the explorer's /api/sql (a real `colline ui` in front of the same
// analyzer, with its token): no file outside the analyzer's work directory is deleted or
// changed, no file's content comes back, no file is opened (a named pipe would let its writer
// through), no connection is made (a listener counts them) and no jar is fetched.
func TestAnalyzeFindings(t *testing.T) {
	for _, line := range sparkLines(t) {
		t.Run("spark-"+line, func(t *testing.T) {
			t.Parallel()
			testAnalyzeFindings(t, line)
		})
	}
}

func testAnalyzeFindings(t *testing.T, line string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	p := analyzerProcess(t, line)
	c := p.Client()
	w := newWitness(t)
	var answers strings.Builder
	start := time.Now()
	for _, f := range findings {
		resp, err := c.Analyze(ctx, analyze.Request{Reads: f.reads, Files: []analyze.Part{{Name: f.name + ".sql", SQL: w.sub(f.sql)}}})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		b, _ := json.Marshal(resp)
		answers.Write(b)
		var got []string
		for _, st := range resp.Files[0].Statements {
			got = append(got, outcomeOf(st))
			if st.Outcome == analyze.OutcomeRefused && st.Reason == "" {
				t.Errorf("%s: statement %d refused without a reason", f.name, st.Index)
			}
		}
		if strings.Join(got, " ") != strings.Join(f.want, " ") {
			t.Errorf("%s: outcomes %v, want %v\n%s", f.name, got, f.want, b)
		}
	}
	t.Logf("spark %s: %d findings through the service in %.1fs", line, len(findings), time.Since(start).Seconds())

	// the same through the explorer's SQL panel
	s.Neo4j(ctx, t)
	bin := stack.TestColline(ctx, t, s.Root)
	ui := stack.StartUI(t, bin, filepath.Join(t.TempDir(), "ui.log"), "COLLINE_NEO4J_URI="+s.Neo4jURI,
		"COLLINE_UI_ANALYZER_URL="+p.URL, "COLLINE_UI_ANALYZER_TOKEN_FILE="+p.TokenFile)
	start = time.Now()
	for _, f := range findings {
		body, _ := json.Marshal(map[string]string{"sql": w.sub(f.sql)})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ui.URL+"/api/sql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: /api/sql: %v", f.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers.Write(b)
		// the panel draws the events, or says why it cannot: the first statement refused or in error, or no lineage
		want, says := http.StatusOK, "lineage"
		outcomes := " " + strings.Join(f.want, " ") + " "
		switch {
		case strings.Contains(outcomes, " refused ") || strings.Contains(outcomes, " error "):
			want, says = http.StatusUnprocessableEntity, "statement 1, line 1, column 1: refused: "
		case !f.draws:
			want, says = http.StatusUnprocessableEntity, "no lineage to draw"
		}
		if resp.StatusCode != want || !strings.Contains(string(b), says) {
			t.Errorf("%s through /api/sql: %d %s; want %d saying %q", f.name, resp.StatusCode, b, want, says)
		}
	}
	t.Logf("spark %s: %d findings through the explorer's /api/sql in %.1fs", line, len(findings), time.Since(start).Seconds())
	w.check(t, answers.String())
}

// TestAnalyzeHostileGraphType: a column type in the graph that is SQL rather than a type (any
// producer can send one) reaches `colline analyze --schema-from-graph` and `colline impact` as
// data: the table is refused with its column named, nothing is created or deleted.
func TestAnalyzeHostileGraphType(t *testing.T) {
	const line = "3.5_2.12"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := stack.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	driver := s.Neo4j(ctx, t)
	// the event's datasets, its job and its run: the job is its own, so that no run is left on
	// the jobs other tests count (the explorer's browser test counts colline-spark-sql's runs)
	runID := "hostile-" + stack.NewID()
	prefixes := []string{"spark_catalog/hostile_graph.", "hostile_graph/", runID}
	wipe := func(ctx context.Context) error {
		for _, p := range prefixes {
			if err := stack.WipeKeys(ctx, driver, p); err != nil {
				return err
			}
		}
		return nil
	}
	if err := wipe(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wipe(context.Background()) })
	w := newWitness(t)
	hostile := fmt.Sprintf("int) USING parquet; CREATE DATABASE p LOCATION '%s'; CREATE TABLE p.z (a int", w.victim)

	// the captured skeleton run's last event, its datasets moved to database hostile_graph and the
	// type of revenue replaced: what a hostile producer would send
	raw, err := os.ReadFile(filepath.Join(s.Root, "plan/testdata/spark-3.5/skeleton/0004-8-InsertIntoHadoopFsRelationCommand.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	ev["eventId"] = runID
	ev["app"].(map[string]any)["namespace"] = "hostile_graph"
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ns, ok := x["namespace"].([]any); ok && len(ns) == 1 && ns[0] == "shop" {
				x["namespace"] = []any{"hostile_graph"}
			}
			if x["name"] == "revenue" && x["type"] != nil {
				x["type"] = hostile
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(ev)
	evFile := filepath.Join(t.TempDir(), "hostile.json")
	b, _ := json.Marshal(ev)
	if err := os.WriteFile(evFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := analyzerProcess(t, line)
	bin := stack.TestColline(ctx, t, s.Root)
	colline := func(args ...string) (string, string, int) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = s.Root
		cmd.Env = append(os.Environ(), "COLLINE_NEO4J_URI="+s.Neo4jURI, "COLLINE_ANALYZER_URL="+p.URL, "COLLINE_ANALYZER_TOKEN_FILE="+p.TokenFile)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := exitCode(cmd.Run())
		return stdout.String(), stderr.String(), code
	}
	if out, errOut, code := colline("replay", evFile); code != 0 {
		t.Fatalf("replay of the hostile event: exit %d\n%s%s", code, out, errOut)
	}
	job := filepath.Join(t.TempDir(), "job.sql")
	if err := os.WriteFile(job, []byte("CREATE TABLE hostile_graph.out USING parquet AS SELECT country, revenue FROM hostile_graph.top_countries;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantRefusal := `table ` + "`hostile_graph`.`top_countries`" + ` (from the graph) not defined: column "revenue": type "int) USING parquet;`
	for _, args := range [][]string{
		// without inference, so that the refused table stays undefined (with it, the statement's
		// columns would be inferred)
		{"analyze", "--infer=false", job},
		{"impact", "--infer=false", "--job", "default/hostile", job},
	} {
		_, errOut, code := colline(args...)
		if !strings.Contains(errOut, wantRefusal) {
			t.Errorf("colline %s: no refusal naming the column in:\n%s", args[0], errOut)
		}
		if code != 1 || !strings.Contains(errOut, "TABLE_OR_VIEW_NOT_FOUND") {
			t.Errorf("colline %s: exit %d, want 1 for the statement reading the refused table:\n%s", args[0], code, errOut)
		}
		if i := strings.Index(errOut, "table `hostile_graph`"); i >= 0 {
			t.Logf("colline %s: exit %d; %s", args[0], code, firstLine(errOut[i:]))
		}
	}
	w.check(t, "")
}

// TestAnalyzeDoor checks the analyzer's door over HTTP, on the package's Spark 4.1 analyzer: its
// token, the Host header on loopback, no cross-site request, the JSON content type, the method,
// the declared size; slow clients are dropped after the read timeout and do not wedge it; and
// concurrent requests each see their own definitions.
func TestAnalyzeDoor(t *testing.T) {
	p := analyzerProcess(t, "4.1_2.13")
	token := p.Client().Token
	host := strings.TrimPrefix(p.URL, "http://")
	send := func(method, path string, header map[string]string, body string) (int, string) {
		req, _ := http.NewRequest(method, p.URL+path, strings.NewReader(body))
		for k, v := range header {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	auth := "Bearer " + token
	okBody := `{"files": [{"name": "a.sql", "sql": "SELECT 1"}]}`
	for _, c := range []struct {
		name, method, path string
		header             map[string]string
		body               string
		code               int
		says               string
	}{
		{"no token", "POST", "/v1/analyze", map[string]string{"Content-Type": "application/json"}, okBody, 401, "bearer token"},
		{"wrong token", "POST", "/v1/analyze", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer nope"}, okBody, 401, "bearer token"},
		{"health without token", "GET", "/healthz", nil, "", 401, "bearer token"},
		{"another host (DNS rebinding)", "POST", "/v1/analyze", map[string]string{"Content-Type": "application/json", "Authorization": auth, "Host": "evil.example:80"}, okBody, 403, "Host"},
		{"cross-site origin", "POST", "/v1/analyze", map[string]string{"Content-Type": "application/json", "Authorization": auth, "Origin": "http://evil.example"}, okBody, 403, "cross-site"},
		{"cross-site fetch", "POST", "/v1/analyze", map[string]string{"Content-Type": "application/json", "Authorization": auth, "Sec-Fetch-Site": "cross-site"}, okBody, 403, "cross-site"},
		{"a form post", "POST", "/v1/analyze", map[string]string{"Content-Type": "text/plain", "Authorization": auth}, okBody, 415, "application/json"},
		{"GET on analyze", "GET", "/v1/analyze", map[string]string{"Authorization": auth}, "", 405, "use POST"},
		{"a conf that reads files", "POST", "/v1/analyze", map[string]string{"Content-Type": "application/json", "Authorization": auth},
			`{"conf": {"spark.sql.runSQLOnFiles": "true"}, "files": []}`, 400, "spark.sql.runSQLOnFiles"},
		{"localhost", "POST", "/v1/analyze", map[string]string{"Content-Type": "application/json; charset=utf-8", "Authorization": auth,
			"Host": "localhost:" + strings.Split(host, ":")[1]}, okBody, 200, `"outcome":"skipped"`},
		{"health", "GET", "/healthz", map[string]string{"Authorization": auth}, "", 200, `"status":"ok"`},
	} {
		code, body := send(c.method, c.path, c.header, c.body)
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s; want %d saying %q", c.name, code, body, c.code, c.says)
		}
	}
	// a declared body above --max-bytes: refused before it is read
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /v1/analyze HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n{", host, auth)
	status, _ := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if !strings.Contains(status, "413") {
		t.Errorf("a declared 1 GB body: %q, want 413", status)
	}

	// slow clients: more connections than HTTP threads, each sending half a request
	var slow []net.Conn
	for i := 0; i < 20; i++ {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /v1/analyze HTTP/1.1\r\nHost: %s\r\nContent-Ty", host)
		slow = append(slow, c)
	}
	start := time.Now()
	if code, body := send("GET", "/healthz", map[string]string{"Authorization": auth}, ""); code != 200 {
		t.Errorf("health with 20 slow clients: %d %s", code, body)
	}
	answered := time.Since(start)
	if answered > time.Duration(analyzerReadTimeout+10)*time.Second {
		t.Errorf("health with 20 slow clients answered after %s, want within the read timeout (%d s) and a little", answered, analyzerReadTimeout)
	}
	dropped := 0
	for _, c := range slow {
		_ = c.SetReadDeadline(time.Now().Add(time.Duration(analyzerReadTimeout+10) * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF || (err != nil && !isTimeout(err)) {
			dropped++
		}
		c.Close()
	}
	if dropped != len(slow) {
		t.Errorf("%d of %d slow clients dropped by the read timeout", dropped, len(slow))
	}
	t.Logf("20 slow clients: health answered in %s; %d dropped by the %d s read timeout", answered.Round(time.Millisecond), dropped, analyzerReadTimeout)

	// concurrent requests: each defines the same names with its own columns
	var wg sync.WaitGroup
	errs := make(chan string, 24)
	c := p.Client()
	for n := 1; n <= 6; n++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			for round := 0; round < 2; round++ {
				sql := fmt.Sprintf("CREATE DATABASE c; CREATE TABLE c.t (col_%d INT) USING parquet; CREATE TEMPORARY VIEW cv AS SELECT col_%d AS x FROM c.t;"+
					" SET spark.sql.ansi.enabled = %v; CREATE TABLE c.out USING parquet AS SELECT x FROM cv", n, n, n%2 == 0)
				resp, err := c.Analyze(context.Background(), analyze.Request{Files: []analyze.Part{{Name: "c.sql", SQL: sql}}})
				if err != nil {
					errs <- err.Error()
					return
				}
				sts := resp.Files[0].Statements
				last := sts[len(sts)-1]
				ev := ""
				if len(last.Events) > 0 {
					ev = string(last.Events[0])
				}
				for m := 1; m <= 6; m++ {
					if (m == n) != strings.Contains(ev, fmt.Sprintf("col_%d", m)) {
						errs <- fmt.Sprintf("request %d: the CTAS saw %s", n, ev)
						return
					}
				}
			}
		}(n)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
