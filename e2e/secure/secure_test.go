//go:build e2e

// Package secure runs the consumer against Kafka and Neo4j secured as in production
// (dev/secure-services: SASL_SSL with SCRAM-SHA-512, mutual TLS, ACLs; Neo4j with auth and Bolt
// TLS), with credentials read from files. It checks that the lineage arrives whole, and that a
// wrong password, an untrusted certificate or a missing ACL each leave the consumer running, not
// ready, saying what is wrong, and that no secret reaches any log. See docs/operations.md
// ("Security tests").
//
//	go test -tags e2e -count=1 -v ./e2e/secure/
//
// TestMain starts dev/secure-services (state in COLLINE_SECURE_DIR, default .cache/secure) and
// stops it at the end if it was not running before (COLLINE_SECURE_KEEP_SERVICES=1 keeps it).
// The tests wipe the secured Neo4j, which is theirs alone.
package secure

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/colline/colline/analyze"
	"github.com/colline/colline/e2e/stack"
	"github.com/colline/colline/events"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

var env struct {
	root, dir, pki, secrets string
	saslBroker, mtlsBroker  string
	neo4jURI                string
	bin, colline, work      string // the consumer and the CLI, built into work
}

func TestMain(m *testing.M) { stack.Main(m, "secure", setup) }

func setup(m *testing.M) (int, error) {
	var err error
	if env.root, err = stack.RepoRoot(); err != nil {
		return 1, err
	}
	env.dir = stack.Getenv("COLLINE_SECURE_DIR", filepath.Join(env.root, ".cache", "secure"))
	env.pki, env.secrets = filepath.Join(env.dir, "pki"), filepath.Join(env.dir, "secrets")
	env.saslBroker = "127.0.0.1:" + stack.Getenv("COLLINE_SECURE_KAFKA_PORT", "39492")
	env.mtlsBroker = "127.0.0.1:" + stack.Getenv("COLLINE_SECURE_KAFKA_MTLS_PORT", "39493")
	env.neo4jURI = "bolt+s://127.0.0.1:" + stack.Getenv("COLLINE_SECURE_NEO4J_BOLT_PORT", "39487")
	if env.work, err = os.MkdirTemp("", "colline-secure-"); err != nil {
		return 1, err
	}
	running := services("status") == nil
	start := time.Now()
	if err := services("start"); err != nil {
		return 1, fmt.Errorf("dev/secure-services start: %w (see %s)", err, filepath.Join(env.work, "services.log"))
	}
	fmt.Printf("secure: services up in %.1fs (state %s, logs %s)\n", time.Since(start).Seconds(), env.dir, env.work)
	if !running && os.Getenv("COLLINE_SECURE_KEEP_SERVICES") == "" {
		defer services("stop")
	}
	if env.bin, err = stack.BuildConsumer(context.Background(), env.root, env.work, ""); err != nil {
		return 1, err
	}
	if env.colline, err = stack.BuildColline(context.Background(), env.root, env.work); err != nil {
		return 1, err
	}
	return m.Run(), nil
}

// services runs dev/secure-services on the state directory.
func services(args ...string) error {
	return stack.Services(env.root, "secure-services", filepath.Join(env.work, "services.log"),
		[]string{"COLLINE_SECURE_DIR=" + env.dir}, args...)
}

func pki(name string) string    { return filepath.Join(env.pki, name) }
func secret(name string) string { return filepath.Join(env.secrets, name+".password") }

// secrets returns every password dev/secure-services made: none may show in a log.
func secrets(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(env.secrets, "*.password"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(strings.TrimSpace(string(b))) < 8 {
			t.Fatalf("secret %s: %v", f, err)
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	if len(out) < 5 {
		t.Fatalf("only %d secrets under %s", len(out), env.secrets)
	}
	return out
}

func readSecret(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(secret(name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// --- Kafka as admin (topics) and as the listener's user (produce) ------------------------------

func tlsConfig(t *testing.T) *tls.Config {
	t.Helper()
	b, err := os.ReadFile(pki("ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func mechanism(t *testing.T, user string) sasl.Mechanism {
	t.Helper()
	m, err := scram.Mechanism(scram.SHA512, user, readSecret(t, user))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func transport(t *testing.T, user string) *kafka.Transport {
	t.Helper()
	tr := &kafka.Transport{TLS: tlsConfig(t), SASL: mechanism(t, user), DialTimeout: 10 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// topics creates a source topic and a dead-letter topic (under colline., where the ACLs are).
func topics(t *testing.T) (topic, dlq, group string) {
	t.Helper()
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	topic, dlq, group = "colline.secure-"+id, "colline.secure-"+id+".dlq", "colline-secure-"+id
	c := &kafka.Client{Addr: kafka.TCP(env.saslBroker), Timeout: 30 * time.Second, Transport: transport(t, "admin")}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: topic, NumPartitions: 2, ReplicationFactor: 1},
		{Topic: dlq, NumPartitions: 1, ReplicationFactor: 1},
	}})
	if err != nil {
		t.Fatalf("create topics as admin: %v", err)
	}
	for name, err := range resp.Errors {
		if err != nil {
			t.Fatalf("create topic %s: %v", name, err)
		}
	}
	return topic, dlq, group
}

// corpus returns the captured events that make a valid graph, with the items they give.
func corpus(t *testing.T, n int) ([][]byte, []record.Item) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(env.root, "plan", "testdata", "spark-3.5", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var values [][]byte
	var items []record.Item
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.Decode(b)
		if err != nil {
			continue
		}
		lin, err := plan.Extract(ev)
		if err != nil {
			continue
		}
		it := record.Item{Event: ev, Lineage: lin}
		if record.Check(&it) != nil {
			continue
		}
		values, items = append(values, b), append(items, it)
		if len(values) == n {
			break
		}
	}
	if len(values) < n {
		t.Fatalf("only %d usable captured events", len(values))
	}
	return values, items
}

// produce publishes values as the listener's user.
func produce(t *testing.T, topic string, values [][]byte) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(env.saslBroker), Topic: topic, Transport: transport(t, "colline-listener"),
		RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond, BatchBytes: 16 << 20}
	defer w.Close()
	var msgs []kafka.Message
	for i, v := range values {
		msgs = append(msgs, kafka.Message{Key: []byte(strconv.Itoa(i)), Value: v})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("produce as colline-listener: %v", err)
	}
}

// --- Neo4j ----------------------------------------------------------------------------------

func driver(t *testing.T) neo4j.DriverWithContext {
	t.Helper()
	d, err := graph.NewDriver(env.neo4jURI, "neo4j", readSecret(t, "neo4j"), tlsConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	// A wrong password in an earlier test locks the user out for a while
	// (Neo.ClientError.Security.AuthenticationRateLimit): wait until the right one works.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := d.VerifyAuthentication(ctx, nil)
		cancel()
		if err == nil {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("the secured Neo4j refuses the right credentials: %v", err)
		}
		time.Sleep(2 * time.Second)
	}
}

func wipe(t *testing.T, d neo4j.DriverWithContext) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := stack.WipeGraph(ctx, d); err != nil {
		t.Fatalf("wipe the secured Neo4j: %v", err)
	}
}

// compare checks that Neo4j holds exactly the graph of items.
func compare(t *testing.T, d neo4j.DriverWithContext, items []record.Item) {
	t.Helper()
	want, wantEdges, err := graph.Preview(items)
	if err != nil {
		t.Fatal(err)
	}
	if len(wantEdges) == 0 {
		t.Fatal("the items carry no lineage: nothing to compare")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	diff, err := graph.NewReader(d, "").Diff(ctx, want, wantEdges)
	if err != nil {
		t.Fatal(err)
	}
	if !diff.Equal() {
		t.Errorf("the secured graph differs from the events sent: %s", diff)
	}
}

// --- the consumer ---------------------------------------------------------------------------

// start runs the consumer with the given variables (and no other COLLINE_ one) and waits for its
// HTTP server.
func start(t *testing.T, vars ...string) *stack.Consumer {
	t.Helper()
	logf := filepath.Join(env.work, strings.ReplaceAll(t.Name(), "/", "_")+".log")
	c := stack.StartConsumer(t, env.bin, logf, append([]string{"COLLINE_METRICS_INTERVAL=2s", "COLLINE_LOG_LEVEL=debug"}, vars...)...)
	c.Timeout = 20 * time.Second
	return c
}

// noSecrets fails when a password shows in the log.
func noSecrets(t *testing.T, c *stack.Consumer, secrets []string) {
	t.Helper()
	logs := c.Logs()
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("a password of %s shows in the consumer log %s", env.secrets, c.LogFile)
		}
	}
}

// Variables of a consumer through SASL_SSL to Kafka and TLS to Neo4j, every secret from a file.
func saslVars(topic, dlq, group string) []string {
	return []string{
		"COLLINE_KAFKA_BROKERS=" + env.saslBroker, "COLLINE_KAFKA_TOPIC=" + topic, "COLLINE_KAFKA_DLQ_TOPIC=" + dlq,
		"COLLINE_KAFKA_GROUP=" + group, "COLLINE_KAFKA_TLS_CA_FILE=" + pki("ca.pem"),
		"COLLINE_KAFKA_SASL_MECHANISM=SCRAM-SHA-512", "COLLINE_KAFKA_SASL_USERNAME=colline-consumer",
		"COLLINE_KAFKA_SASL_PASSWORD_FILE=" + secret("colline-consumer"),
		"COLLINE_NEO4J_URI=" + env.neo4jURI, "COLLINE_NEO4J_TLS_CA_FILE=" + pki("ca.pem"),
		"COLLINE_NEO4J_USER=neo4j", "COLLINE_NEO4J_PASSWORD_FILE=" + secret("neo4j"),
	}
}

func mtlsVars(topic, dlq, group string) []string {
	return []string{
		"COLLINE_KAFKA_BROKERS=" + env.mtlsBroker, "COLLINE_KAFKA_TOPIC=" + topic, "COLLINE_KAFKA_DLQ_TOPIC=" + dlq,
		"COLLINE_KAFKA_GROUP=" + group, "COLLINE_KAFKA_TLS_CA_FILE=" + pki("ca.pem"),
		"COLLINE_KAFKA_TLS_CERT_FILE=" + pki("colline-consumer.pem"), "COLLINE_KAFKA_TLS_KEY_FILE=" + pki("colline-consumer.key"),
		"COLLINE_NEO4J_URI=" + env.neo4jURI, "COLLINE_NEO4J_TLS_CA_FILE=" + pki("ca.pem"),
		"COLLINE_NEO4J_USER=neo4j", "COLLINE_NEO4J_PASSWORD_FILE=" + secret("neo4j"),
	}
}

// TestSecuredPipeline: the listener's user publishes captured events through SASL_SSL; the
// consumer reads them through SASL_SSL (then through mutual TLS) and writes them to Neo4j over
// TLS with auth; Neo4j then holds exactly their graph, and no secret is in the log.
func TestSecuredPipeline(t *testing.T) {
	values, items := corpus(t, 12)
	d := driver(t)
	all := secrets(t)
	for name, vars := range map[string]func(topic, dlq, group string) []string{"sasl_ssl": saslVars, "mtls": mtlsVars} {
		t.Run(name, func(t *testing.T) {
			wipe(t, d)
			topic, dlq, group := topics(t)
			produce(t, topic, values)
			c := start(t, append(vars(topic, dlq, group), "COLLINE_EXIT_WHEN_IDLE=3s")...)
			if code := c.Wait(t, 3*time.Minute); code != 0 {
				t.Fatalf("consumer exit code %d; log %s:\n%s", code, c.LogFile, c.Logs())
			}
			compare(t, d, items)
			noSecrets(t, c, all)
			t.Logf("%d events through %s into bolt+s with auth", len(values), name)
		})
	}
}

// failure is a consumer set up wrongly in one way, and what it must say.
type failure struct {
	name  string
	vars  func(topic, dlq, group string) []string
	cause string // in the log (/readyz names the failing check only: issue 29)
}

// TestRefused: a wrong password, an untrusted certificate (the rogue CA) or a missing ACL keeps
// the consumer running but not ready, with /readyz naming the failing check (not its error, which
// holds internal addresses) and the log naming the cause, a bounded number
// of warnings (a retry with backoff, not a crash or busy loop), a clean stop on SIGTERM, and no
// secret in the log. The Kafka cases run first, together; then the Neo4j ones (a wrong Neo4j
// password briefly locks the user out, which would disturb the others).
func TestRefused(t *testing.T) {
	all := secrets(t)
	wrong := filepath.Join(t.TempDir(), "wrong.password")
	if err := os.WriteFile(wrong, []byte("not-the-password-0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	with := func(base func(topic, dlq, group string) []string, extra ...string) func(topic, dlq, group string) []string {
		return func(topic, dlq, group string) []string { return append(base(topic, dlq, group), extra...) }
	}
	groups := [][]failure{{
		{"kafka_wrong_password", with(saslVars, "COLLINE_KAFKA_SASL_PASSWORD_FILE="+wrong),
			"SASL Authentication Failed"},
		{"kafka_untrusted_certificate", with(saslVars, "COLLINE_KAFKA_TLS_CA_FILE="+pki("rogue-ca.pem")),
			"x509: certificate signed by unknown authority"},
		{"kafka_missing_acl", with(saslVars, "COLLINE_KAFKA_SASL_USERNAME=colline-noacl",
			"COLLINE_KAFKA_SASL_PASSWORD_FILE="+secret("colline-noacl")), "Authorization Failed"},
		{"kafka_mtls_untrusted_client", with(mtlsVars, "COLLINE_KAFKA_TLS_CERT_FILE="+pki("rogue-client.pem"),
			"COLLINE_KAFKA_TLS_KEY_FILE="+pki("rogue-client.key")), "tls: "},
	}, {
		{"neo4j_wrong_password", with(saslVars, "COLLINE_NEO4J_PASSWORD_FILE="+wrong), "Neo.ClientError.Security."},
		{"neo4j_untrusted_certificate", with(saslVars, "COLLINE_NEO4J_TLS_CA_FILE="+pki("rogue-ca.pem")),
			"x509: certificate signed by unknown authority"},
	}}
	for _, group := range groups {
		t.Run(group[0].name[:5], func(t *testing.T) {
			for _, f := range group {
				t.Run(f.name, func(t *testing.T) {
					t.Parallel()
					refused(t, f, all)
				})
			}
		})
	}
}

func refused(t *testing.T, f failure, all []string) {
	topic, dlq, group := topics(t)
	produce(t, topic, [][]byte{[]byte(`{"not":"read"}`)})
	c := start(t, f.vars(topic, dlq, group)...)
	// Watch for at least window, and until the log names the cause (a refused TLS handshake to
	// Neo4j is retried by the driver for 15 s before the loop hears of it; longer under load).
	const window, most = 30 * time.Second, 3 * time.Minute
	began := time.Now()
	var code int
	var body string
	for time.Since(began) < window || (!strings.Contains(c.Logs(), f.cause) && time.Since(began) < most) {
		time.Sleep(3 * time.Second)
		if !c.Running() {
			t.Fatalf("the consumer exited (%v) instead of waiting; log %s:\n%s", c.Err(), c.LogFile, c.Logs())
		}
		var err error
		if code, body, err = c.Get("/readyz"); err != nil {
			t.Fatalf("/readyz: %v", err)
		}
		if code == http.StatusOK {
			t.Fatalf("/readyz is 200 with %s", f.name)
		}
	}
	if check := f.name[:5]; !strings.Contains(body, check+": ") && !strings.Contains(body, "consumer: retrying") || strings.Contains(body, f.cause) {
		t.Errorf("/readyz (%d) names neither the check %s nor a retry, or shows the error %q:\n%s", code, check, f.cause, body)
	}
	logs := c.Logs()
	if !strings.Contains(logs, f.cause) {
		t.Errorf("the log does not name the cause %q; log %s", f.cause, c.LogFile)
	}
	watched := time.Since(began).Round(time.Second)
	warnings := strings.Count(logs, `"level":"WARN"`) + strings.Count(logs, `"level":"ERROR"`)
	if limit := int(watched.Seconds()) * 2; warnings > limit {
		t.Errorf("%d warnings in %v (> %d): a busy loop, not a backoff; log %s", warnings, watched, limit, c.LogFile)
	}
	c.Signal(syscall.SIGTERM)
	if code := c.Wait(t, time.Minute); code != 0 {
		t.Errorf("exit code %d after SIGTERM; log %s", code, c.LogFile)
	}
	noSecrets(t, c, all)
	t.Logf("%s: running and not ready for %v, %d warnings; /readyz: %s", f.name, watched, warnings,
		strings.ReplaceAll(strings.TrimSpace(body), "\n", " | "))
}

// TestExplorerSecured: colline ui reads the secured Neo4j (auth, Bolt TLS) with the consumer's
// COLLINE_NEO4J_* variables, the password from its file, and serves HTTPS with a bearer token
// from a file: it is ready, refuses a request without the token, and finds the replayed lineage.
// With an untrusted certificate it keeps serving, not ready, and says why. No password or token
// shows in its log or its answers. It runs before TestCLIReplay's wrong password locks the user out.
func TestExplorerSecured(t *testing.T) {
	bin := env.colline
	d := driver(t)
	defer stack.WipeKeys(context.Background(), d, "spark_catalog/shop.")
	events := filepath.Join(env.root, "plan", "testdata", "spark-3.5", "skeleton")
	replay := exec.Command(bin, "replay", "--neo4j", env.neo4jURI, "--user", "neo4j",
		"--password-file", secret("neo4j"), "--ca-file", pki("ca.pem"), events)
	replay.Env = stack.Environ()
	if out, err := replay.CombinedOutput(); err != nil {
		t.Fatalf("colline replay: %v\n%s", err, out)
	}
	token := filepath.Join(t.TempDir(), "ui.token")
	if err := os.WriteFile(token, []byte("ui-token-"+stack.NewID()+stack.NewID()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(token)
	if err != nil {
		t.Fatal(err)
	}
	all := append(secrets(t), strings.TrimSpace(string(tok)))
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig(t)}}
	get := func(u *stack.UI, path string, auth bool) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, u.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, s := range all {
			if strings.Contains(string(b), s) {
				t.Errorf("GET %s: a secret shows in the answer", path)
			}
		}
		return resp.StatusCode, string(b)
	}
	start := func(name, ca string, extra ...string) *stack.UI {
		return stack.StartUI(t, bin, filepath.Join(env.work, "ui-"+name+".log"), append([]string{
			"COLLINE_NEO4J_URI=" + env.neo4jURI, "COLLINE_NEO4J_USER=neo4j", "COLLINE_NEO4J_PASSWORD_FILE=" + secret("neo4j"),
			"COLLINE_NEO4J_TLS_CA_FILE=" + ca, "COLLINE_UI_TOKEN_FILE=" + token,
			"COLLINE_UI_TLS_CERT_FILE=" + pki("neo4j-server.pem"), "COLLINE_UI_TLS_KEY_FILE=" + pki("neo4j-server.key")}, extra...)...)
	}
	noSecret := func(u *stack.UI) {
		t.Helper()
		for _, s := range all {
			if strings.Contains(u.Logs(), s) {
				t.Errorf("a secret shows in the explorer's log %s", u.LogFile)
			}
		}
	}

	t.Run("ok", func(t *testing.T) {
		u := start("ok", pki("ca.pem"))
		if !strings.HasPrefix(u.URL, "https://") {
			t.Fatalf("the explorer serves %s, want HTTPS", u.URL)
		}
		if code, body := get(u, "/readyz", false); code != http.StatusOK {
			t.Errorf("/readyz: %d %s", code, body)
		}
		if code, _ := get(u, "/api/search?q=country_revenue", false); code != http.StatusUnauthorized {
			t.Errorf("/api/search without the token: %d, want 401", code)
		}
		code, body := get(u, "/api/search?q=country_revenue", true)
		if code != http.StatusOK || !strings.Contains(body, `"spark_catalog/shop.country_revenue"`) {
			t.Errorf("/api/search with the token: %d, want the replayed table:\n%s", code, body)
		}
		noSecret(u)
	})
	t.Run("sql_panel_analyzer_token", func(t *testing.T) {
		// The SQL panel's analyzer is a stand-in that requires its own bearer token, as colline
		// analyze does when started with --token-file: this checks the explorer's wiring (variables,
		// secret file, client), not the analyzer.
		ev, err := os.ReadFile(filepath.Join(events, "0004-8-InsertIntoHadoopFsRelationCommand.json"))
		if err != nil {
			t.Fatal(err)
		}
		want := "analyzer-token-" + stack.NewID() + stack.NewID()
		tokenFile := filepath.Join(t.TempDir(), "analyzer.token")
		if err := os.WriteFile(tokenFile, []byte(want+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		analyzer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+want {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"error":"missing or wrong bearer token"}`))
				return
			}
			_ = json.NewEncoder(w).Encode(analyze.Response{Files: []analyze.File{{Name: "panel.sql", Statements: []analyze.Statement{
				{Index: 1, Line: 1, Column: 1, Outcome: analyze.OutcomeEvent, Events: []json.RawMessage{ev}}}}}})
		}))
		defer analyzer.Close()
		post := func(u *stack.UI) (int, string) {
			t.Helper()
			req, err := http.NewRequest(http.MethodPost, u.URL+"/api/sql", strings.NewReader(`{"sql": "INSERT INTO shop.country_revenue SELECT 1"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("POST /api/sql: %v", err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if strings.Contains(string(b), want) {
				t.Errorf("POST /api/sql: the analyzer's token shows in the answer")
			}
			return resp.StatusCode, string(b)
		}
		u := start("sql", pki("ca.pem"), "COLLINE_UI_ANALYZER_URL="+analyzer.URL, "COLLINE_UI_ANALYZER_TOKEN_FILE="+tokenFile)
		if code, body := post(u); code != http.StatusOK || !strings.Contains(body, "spark_catalog/shop.top_countries#revenue") {
			t.Errorf("/api/sql with the analyzer's token configured: %d, want the event's lineage:\n%s", code, body)
		}
		without := start("sql-no-token", pki("ca.pem"), "COLLINE_UI_ANALYZER_URL="+analyzer.URL)
		if code, body := post(without); code == http.StatusOK || !strings.Contains(body, "401 Unauthorized: missing or wrong bearer token") {
			t.Errorf("/api/sql without the analyzer's token: %d %s, want the analyzer's refusal passed on", code, body)
		}
		for _, x := range []*stack.UI{u, without} {
			if strings.Contains(x.Logs(), want) {
				t.Errorf("the analyzer's token shows in the explorer's log %s", x.LogFile)
			}
		}
		noSecret(u)
	})
	t.Run("untrusted_certificate", func(t *testing.T) {
		u := start("untrusted", pki("rogue-ca.pem"))
		code, body := get(u, "/readyz", false)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "neo4j: unreachable") || strings.Contains(body, "certificate") {
			t.Errorf("/readyz with an untrusted Neo4j certificate: %d %q, want 503 naming Neo4j, not its error", code, body)
		}
		if !strings.Contains(u.Logs(), "certificate signed by unknown authority") {
			t.Errorf("the explorer's log does not name the certificate; log %s", u.LogFile)
		}
		if code, _ := get(u, "/healthz", false); code != http.StatusOK {
			t.Errorf("/healthz: %d: the explorer should keep serving", code)
		}
		t.Logf("untrusted certificate: /readyz %d %s", code, strings.TrimSpace(body))
		noSecret(u)
	})
}

// TestCLIReplay: colline replay writes to the secured Neo4j with --password-file and --ca-file,
// and says what is wrong with an untrusted certificate (without retrying) or a wrong password
// (exit 1), never printing the password. It runs last: a wrong password locks the user out for a few seconds.
func TestCLIReplay(t *testing.T) {
	bin := env.colline
	wrong := filepath.Join(t.TempDir(), "wrong.password")
	if err := os.WriteFile(wrong, []byte("not-the-password-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	all := secrets(t)
	driver(t) // waits out a lock-out left by the Neo4j refusal tests
	events := filepath.Join(env.root, "plan", "testdata", "spark-3.5", "skeleton")
	for _, tc := range []struct {
		name, ca, password string
		code               int
		want               string
	}{
		{"ok", pki("ca.pem"), secret("neo4j"), 0, "wrote "},
		// at once: no retry makes a certificate trusted (the driver's retries would say "exceeded max retry time")
		{"untrusted_certificate", pki("rogue-ca.pem"), secret("neo4j"), 1, "Neo4j's TLS certificate is not trusted: ConnectivityError: tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{"wrong_password", pki("ca.pem"), wrong, 1, "Neo.ClientError.Security.Unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "replay", "--neo4j", env.neo4jURI, "--user", "neo4j",
				"--password-file", tc.password, "--ca-file", tc.ca, events)
			cmd.Env = stack.Environ()
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != tc.code || !strings.Contains(string(out), tc.want) {
				t.Errorf("exit %d (want %d), output without %q:\n%s", code, tc.code, tc.want, out)
			}
			for _, s := range all {
				if strings.Contains(string(out), s) {
					t.Errorf("a password shows in the output")
				}
			}
			t.Logf("%s: exit %d: %s", tc.name, cmd.ProcessState.ExitCode(), strings.TrimSpace(string(out)))
		})
	}
}

// TestCLIUpgrade: colline upgrade re-reads a topic through SASL_SSL as colline-consumer (the
// consumer's COLLINE_KAFKA_* variables, the password from its file) into the secured Neo4j, which
// then holds exactly the graph of the events; a wrong SASL password fails naming the cause; no
// password in the output.
func TestCLIUpgrade(t *testing.T) {
	bin := env.colline
	values, items := corpus(t, 12)
	topic, dlq, group := topics(t)
	produce(t, topic, values)
	d := driver(t)
	wipe(t, d)
	wrong := filepath.Join(t.TempDir(), "wrong.password")
	if err := os.WriteFile(wrong, []byte("not-the-password-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	all := secrets(t)
	run := func(extra ...string) (int, string) {
		cmd := exec.Command(bin, "upgrade", "--brokers", env.saslBroker, "--topic", topic, "--neo4j", env.neo4jURI,
			"--user", "neo4j", "--password-file", secret("neo4j"), "--ca-file", pki("ca.pem"))
		cmd.Env = append(stack.Environ(), saslVars(topic, dlq, group)...)
		cmd.Env = append(cmd.Env, extra...)
		out, _ := cmd.CombinedOutput()
		for _, s := range all {
			if strings.Contains(string(out), s) {
				t.Errorf("a password shows in the output")
			}
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := run()
	if code != 0 || !strings.Contains(out, "upgrade: done") {
		t.Fatalf("upgrade through SASL_SSL: exit %d:\n%s", code, out)
	}
	compare(t, d, items)
	t.Logf("ok: %s", strings.TrimSpace(out[strings.LastIndex(out, "upgrade: done"):]))
	code, out = run("COLLINE_KAFKA_SASL_PASSWORD_FILE=" + wrong)
	if code == 0 || !strings.Contains(out, "SASL Authentication Failed") {
		t.Errorf("upgrade with a wrong SASL password: exit %d, output without the cause:\n%s", code, out)
	}
	if strings.Contains(out, "removed") {
		t.Errorf("upgrade with a wrong SASL password touched the graph before reaching Kafka:\n%s", out)
	}
	t.Logf("wrong password: exit %d: %q", code, strings.TrimSpace(out))
}

// TestListenerThroughSASLSSL: a real Spark 3.5 job (e2e/testdata/skeleton.sql) with the listener
// publishing through SASL_SSL as colline-listener (producer settings passed through
// spark.colline.kafka.*, the password read by Kafka's FileConfigProvider, the CA as a PEM
// truststore); the consumer then writes what arrived to the secured Neo4j, which holds exactly
// its graph. Needs the listener jar (make listener).
func TestListenerThroughSASLSSL(t *testing.T) {
	jar := filepath.Join(env.root, "listener", "target", "colline-listener-spark3.5_2.12-0.1.0.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("no listener jar (%v): run make listener", err)
	}
	topic, dlq, group := topics(t)
	s := &stack.Stack{Root: env.root, Brokers: env.saslBroker, Log: io.Discard}
	logf, err := os.Create(filepath.Join(env.work, "spark.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	s.Log = logf
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const p = "-Dspark.colline.kafka."
	err = s.Spark(ctx, t.TempDir(), topic, []string{"SPARK_LINE=3.5_2.12"},
		"e2e/testdata/skeleton.sql",
		"-Dspark.app.name=colline-secure-e2e",
		p+"security.protocol=SASL_SSL",
		p+"max.block.ms=60000", // the first metadata fetch took over 10 s (the default here) on a loaded machine
		p+"sasl.mechanism=SCRAM-SHA-512",
		p+"ssl.truststore.type=PEM",
		p+"ssl.truststore.location="+pki("ca.pem"),
		p+"config.providers=file",
		p+"config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider",
		p+`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="colline-listener" password="${file:`+
			filepath.Join(env.secrets, "colline-listener.properties")+`:password}";`)
	if err != nil {
		t.Fatalf("%v; log %s", err, logf.Name())
	}

	// What the listener published, read back as admin from both partitions.
	var msgs []kafka.Message
	for part := range 2 {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{env.saslBroker}, Topic: topic, Partition: part,
			Dialer: &kafka.Dialer{Timeout: 10 * time.Second, TLS: tlsConfig(t), SASLMechanism: mechanism(t, "admin")}})
		for {
			rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
			m, err := r.ReadMessage(rctx)
			rcancel()
			if err != nil {
				break
			}
			msgs = append(msgs, m)
		}
		r.Close()
	}
	var values [][]byte
	var items []record.Item
	for _, m := range msgs {
		values = append(values, m.Value)
		ev, err := events.Decode(m.Value)
		if err != nil {
			t.Fatalf("event at offset %d: %v", m.Offset, err)
		}
		lin, err := plan.Extract(ev)
		if err != nil {
			t.Fatalf("event at offset %d: %v", m.Offset, err)
		}
		if it := (record.Item{Event: ev, Lineage: lin}); record.Check(&it) == nil {
			items = append(items, it)
		}
	}
	if len(values) < 3 {
		t.Fatalf("the listener published %d events through SASL_SSL (want the skeleton's writes); log %s", len(values), logf.Name())
	}
	d := driver(t)
	wipe(t, d)
	c := start(t, append(saslVars(topic, dlq, group), "COLLINE_EXIT_WHEN_IDLE=3s")...)
	if code := c.Wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("consumer exit code %d; log %s", code, c.LogFile)
	}
	compare(t, d, items)
	all := secrets(t)
	noSecrets(t, c, all)
	b, _ := os.ReadFile(logf.Name())
	for _, s := range all {
		if strings.Contains(string(b), s) {
			t.Errorf("a password shows in the Spark log %s", logf.Name())
		}
	}
	t.Logf("the listener published %d events through SASL_SSL; the consumer wrote them to bolt+s", len(values))
}

// TestNoSecretInServiceLogs (last): the brokers' and Neo4j's own logs, after every test above,
// hold no password either. The configuration files (server.properties, admin.properties) do, by design:
// they are 0600 and not logs.
func TestNoSecretInServiceLogs(t *testing.T) {
	all := secrets(t)
	n := 0
	err := filepath.WalkDir(filepath.Join(env.dir, "run"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.HasSuffix(p, ".properties") || !(strings.Contains(p, "log") || strings.HasSuffix(p, ".log")) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		for _, s := range all {
			if strings.Contains(string(b), s) {
				t.Errorf("a password shows in %s", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("only %d log files under %s", n, filepath.Join(env.dir, "run"))
	}
	t.Logf("%d service log files checked", n)
}
