// Local Neo4j 5.26 (Community) for colline development and tests: Bolt + HTTP + Neo4j Browser,
// listening on 127.0.0.1 only; auth off and no TLS unless asked (dev/secure-services asks). Started by `dev/services start neo4j`; run by hand with
//
//   java -Xmx1g --add-opens=... -cp '.cache/jars/neo4j/*' dev/neo4j/Neo4jServer.java <work-dir>
//
// (single-file source launch, no javac step). Settings come from system properties:
//   -Dcolline.neo4j.bolt.port=17687  -Dcolline.neo4j.http.port=17474
//   -Dcolline.neo4j.host=127.0.0.1   -Dcolline.neo4j.pagecache.mb=64
//   -Dcolline.neo4j.password.file=F  auth on; the user neo4j gets the password in F (first line)
//                                    at every start, before READY (the file, not the command line,
//                                    so that the password shows in no process list)
//   -Dcolline.neo4j.tls.dir=D        Bolt requires TLS and the HTTP port serves HTTPS only, with
//                                    D/private.key (PKCS#8 PEM) and D/public.crt (PEM chain)
//   -Dcolline.neo4j.browser.ui=URL   colline ui's address: Neo4j Browser loads colline's style and
//                                    guide from it when it connects (browser.post_connect_cmd; the
//                                    host is added to browser.remote_content_hostname_whitelist)
//
// Layout under <work-dir>:
//   data/   the store (databases + transaction logs); survives restarts, delete it to reset
//   logs/   Neo4j's own logs (debug.log, http.log, ...)
//   home/   the harness's scratch NEO4J_HOME (random sub-folder, deleted on clean shutdown)
//
// Prints "NEO4J_READY bolt://host:port http://host:port" on stdout once both connectors accept
// connections, and "NEO4J_STOPPED" after a clean shutdown (SIGTERM/SIGINT run the shutdown hook).

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.configuration.ssl.ClientAuth;
import org.neo4j.configuration.ssl.SslPolicyConfig;
import org.neo4j.configuration.ssl.SslPolicyScope;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilder;
import org.neo4j.harness.Neo4jBuilders;
import org.neo4j.io.ByteUnit;
import org.neo4j.server.configuration.ServerSettings;

public class Neo4jServer {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: java -cp 'jars/*' Neo4jServer.java <work-dir>");
            System.exit(2);
        }
        Path work = Path.of(args[0]).toAbsolutePath();
        String host = System.getProperty("colline.neo4j.host", "127.0.0.1");
        int boltPort = Integer.getInteger("colline.neo4j.bolt.port", 17687);
        int httpPort = Integer.getInteger("colline.neo4j.http.port", 17474);
        long pageCacheMb = Long.getLong("colline.neo4j.pagecache.mb", 64L);
        String passwordFile = System.getProperty("colline.neo4j.password.file", "");
        String tlsDir = System.getProperty("colline.neo4j.tls.dir", "");
        String browserUI = System.getProperty("colline.neo4j.browser.ui", "");

        Path data = work.resolve("data");
        Path logs = work.resolve("logs");
        Path home = work.resolve("home");
        deleteRecursively(home); // leftovers of an unclean stop (the harness removes it on close)
        Files.createDirectories(data);
        Files.createDirectories(logs);
        Files.createDirectories(home);

        long t0 = System.nanoTime();
        Neo4j db;
        try {
            db = build(home, data, logs, host, boltPort, httpPort, pageCacheMb, tlsDir, !passwordFile.isEmpty(), browserUI);
            if (!passwordFile.isEmpty()) {
                setPassword(db, Path.of(passwordFile));
            }
        } catch (Throwable t) {
            // Neo4j may leave non-daemon threads behind: exit explicitly so the caller sees it.
            System.out.println("NEO4J_FAILED " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            Runtime.getRuntime().halt(1);
            return;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("NEO4J_STOPPING");
            System.out.flush();
            try {
                db.close();
                System.out.println("NEO4J_STOPPED");
            } catch (Throwable t) {
                System.out.println("NEO4J_STOP_FAILED " + t);
                t.printStackTrace(System.out);
            } finally {
                System.out.flush();
                stopped.countDown();
            }
        }, "neo4j-shutdown"));

        // build() returns once the DBMS and connectors are started; check the sockets anyway so
        // that the READY line is a promise a client can rely on.
        awaitPort(host, boltPort);
        awaitPort(host, httpPort);
        boolean tls = !tlsDir.isEmpty();
        System.out.printf("NEO4J_READY %s://%s:%d %s://%s:%d (harness %s, auth %s, started in %.1fs, data %s)%n",
                tls ? "bolt+s" : "bolt", host, boltPort, tls ? "https" : "http", host, httpPort, db.boltURI(),
                passwordFile.isEmpty() ? "off" : "on", (System.nanoTime() - t0) / 1e9, data);
        System.out.flush();
        stopped.await();
    }

    private static Neo4j build(Path home, Path data, Path logs, String host, int boltPort, int httpPort,
            long pageCacheMb, String tlsDir, boolean auth, String browserUI) {
        boolean tls = !tlsDir.isEmpty();
        Neo4jBuilder b = Neo4jBuilders.newInProcessBuilder(home)
                .withConfig(GraphDatabaseSettings.data_directory, data)
                .withConfig(GraphDatabaseSettings.logs_directory, logs)
                .withConfig(GraphDatabaseSettings.auth_enabled, auth)
                .withConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMb))
                .withConfig(GraphDatabaseSettings.udc_enabled, false)
                .withConfig(ServerSettings.allow_telemetry, false) // Neo4j Browser: no usage analytics
                .withConfig(GraphDatabaseSettings.routing_enabled, false)
                .withConfig(GraphDatabaseSettings.default_listen_address, new SocketAddress(host))
                .withConfig(GraphDatabaseSettings.default_advertised_address, new SocketAddress(host))
                .withConfig(BoltConnector.enabled, true)
                .withConfig(BoltConnector.listen_address, new SocketAddress(host, boltPort))
                .withConfig(BoltConnector.advertised_address, new SocketAddress(host, boltPort))
                // Bolt waits 5 s by default for connections and worker threads at shutdown.
                .withConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofSeconds(1))
                .withConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofSeconds(1));
        if (!browserUI.isEmpty()) {
            // What docs/browser.md tells a production Neo4j to set in neo4j.conf.
            b = b.withConfig(ServerSettings.browser_post_connect_cmd,
                            "style " + browserUI + "/neo4j/colline.grass; guide " + browserUI + "/neo4j/guide.html")
                    .withConfig(ServerSettings.browser_remote_content_hostname_whitelist,
                            "guides.neo4j.com,localhost," + java.net.URI.create(browserUI).getHost());
        }
        if (!tls) {
            return b.withConfig(HttpConnector.enabled, true)
                    .withConfig(HttpConnector.listen_address, new SocketAddress(host, httpPort))
                    .withConfig(HttpConnector.advertised_address, new SocketAddress(host, httpPort))
                    .withConfig(HttpsConnector.enabled, false)
                    .build();
        }
        Path dir = Path.of(tlsDir).toAbsolutePath();
        b = b.withConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.REQUIRED)
                .withConfig(HttpConnector.enabled, false)
                .withConfig(HttpsConnector.enabled, true)
                .withConfig(HttpsConnector.listen_address, new SocketAddress(host, httpPort))
                .withConfig(HttpsConnector.advertised_address, new SocketAddress(host, httpPort));
        for (SslPolicyScope scope : new SslPolicyScope[] {SslPolicyScope.BOLT, SslPolicyScope.HTTPS}) {
            SslPolicyConfig p = SslPolicyConfig.forScope(scope);
            b = b.withConfig(p.enabled, true)
                    .withConfig(p.base_directory, dir)
                    .withConfig(p.private_key, dir.resolve("private.key"))
                    .withConfig(p.public_certificate, dir.resolve("public.crt"))
                    .withConfig(p.trusted_dir, dir.resolve("trusted"))
                    .withConfig(p.revoked_dir, dir.resolve("revoked"))
                    .withConfig(p.client_auth, ClientAuth.NONE);
        }
        return b.build();
    }

    // setPassword gives the user neo4j the password in file (first line) and drops the "change
    // required" flag; run at every start, so that a new password in the file takes effect.
    private static void setPassword(Neo4j db, Path file) throws IOException {
        String pw = Files.readAllLines(file).get(0).strip();
        try {
            db.databaseManagementService().database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", pw));
        } catch (RuntimeException e) {
            // A restart with the same file: Neo4j refuses to "change" to the current password.
            if (!String.valueOf(e.getMessage()).contains("cannot be the same")
                    && !String.valueOf(e.getCause()).contains("cannot be the same")) {
                throw e;
            }
        }
    }

    private static void awaitPort(String host, int port) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 1000);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("port " + host + ":" + port + " does not accept connections", e);
                }
                Thread.sleep(100);
            }
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
