package io.colline.hive;

import static org.junit.Assert.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;

import org.junit.Test;

/** The Spark listener's redaction rules, on the cases both test suites share. */
public class RedactTest {
  private final Redact r = new Redact(Config.REDACTION_DEFAULT, null, true);

  @Test
  public void sharedCases() throws Exception {
    List<String> lines = Files.readAllLines(Paths.get("../listener/src/test/resources/redaction-cases.tsv"), StandardCharsets.UTF_8);
    int n = 0;
    for (String line : lines) {
      if (line.startsWith("#") || line.trim().isEmpty()) continue;
      String[] f = line.split("\t", -1);
      String want = f[2].replace("MASK", Redact.MASK);
      String got;
      switch (f[0]) {
        case "secrets": got = r.secrets(f[1]); break;
        case "maskLiterals": got = Redact.maskLiterals(f[1]); break;
        case "uri": got = Redact.uri(f[1]); break;
        case "name": got = r.name(f[1]); break;
        default: throw new AssertionError("unknown function " + f[0]);
      }
      assertEquals(line, want, got);
      n++;
    }
    assertEquals("cases read", true, n >= 10);
  }

  @Test
  public void redactionRegexMasksAValueAfterKeyEquals() {
    Redact pin = new Redact("(?i)pin", null, true);
    assertEquals("card_pin=" + Redact.MASK + " other=5", pin.secrets("card_pin=1234 other=5"));
  }

  @Test
  public void stringRegexFirstThenCredentials() {
    Redact s = new Redact(null, "\\d{4}-\\d{4}", true);
    assertEquals("user " + Redact.MASK + " failed", s.text("user 4111-1111 failed"));
  }

  @Test
  public void sqlMasksLiteralsUnlessTurnedOff() {
    assertEquals("insert into t values (?, ?)", r.sql("insert into t values (1, 'secret value')"));
    assertEquals("insert into t values (1, 'x')", new Redact(null, null, false).sql("insert into t values (1, 'x')"));
  }
}
