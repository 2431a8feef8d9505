// A JVM to stand in for a Kafka broker in the systemd guests (test/vm/systemd-jvm.test.ts): its class is
// kafka.Kafka, as a real broker's java command line names it, and it runs the thread set isolate must
// fence: request handlers that keep CPUs busy, network threads, and a G1 heap that collects regularly
// (each handler keeps a ring of recent buffers, so young collections copy live data), plus the GC
// and JIT threads HotSpot starts for the CPUs it sees. Arguments: handler count (default 3). Thread
// names fit the 15 bytes of /proc/PID/task/TID/comm, so the guest reads them whole.
package kafka;

public final class Kafka {
  private static volatile long sink;

  public static void main(String[] args) throws InterruptedException {
    int handlers = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    for (int i = 0; i < handlers; i++) {
      Thread t = new Thread(Kafka::handle, "kafka-handler-" + i);
      t.setDaemon(true);
      t.start();
    }
    for (int i = 0; i < 2; i++) {
      Thread t = new Thread(Kafka::network, "kafka-network-" + i);
      t.setDaemon(true);
      t.start();
    }
    Thread.sleep(Long.MAX_VALUE);
  }

  /**
   * Busy: hashes freshly allocated buffers and keeps the last 64 alive (~4 MB live per handler). A
   * sleep every 4 buffers (~10 MB/s each on a real CPU) leaves the emulated CPUs (TCG, on a shared
   * 2-core host) room for the scenario: every thread's placement is what the test reads, not how
   * much it ran, and at a 5 ms sleep the handlers and the collections they caused took much of the
   * guest's emulated time for the whole scenario (issue 59).
   */
  private static void handle() {
    byte[][] ring = new byte[64][];
    long n = 0;
    while (true) {
      if ((n & 3) == 0) pause(25);
      byte[] b = new byte[64 * 1024];
      for (int i = 0; i < b.length; i += 64) b[i] = (byte) (n + i);
      long h = n;
      for (int i = 0; i < b.length; i += 512) h = h * 31 + b[i];
      sink += h;
      ring[(int) (n++ & 63)] = b;
    }
  }

  /** Mostly waiting, as a network thread is between requests. */
  private static void network() {
    while (true) {
      pause(50);
      sink++;
    }
  }

  private static void pause(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
