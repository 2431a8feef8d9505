// The agent's timings for in-process tests: a round every 20 ms so a test sees several in well under a
// second, the RAID and check rounds never due within a test, and backoff capped short.
export const TEST_AGENT_TIMING = {
  intervalMs: 20,
  raidIntervalMs: 600_000,
  checkIntervalMs: 600_000,
  maxBackoffMs: 200,
} as const;
