/* A stand-in for `claude -p --output-format stream-json` for the ctx-run overhead benchmark: it
 * prints a fixed answer (an init event with the session of --session-id or --resume, one
 * assistant message and a result that reports the task done, with usage) and exits. It reads
 * nothing and writes nothing else, so the time a call takes outside ctx-run is only the process
 * start, which ctx-run counts as the client's time; with CTXKIT_STANDIN_EXIT_MS=N it waits N ms
 * after printing the result before it exits, as the real client does while it shuts down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char** argv) {
  const char* session = "00000000-0000-4000-8000-000000000000";
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--session-id") == 0 || strcmp(argv[i], "--resume") == 0)
      session = argv[i + 1];
  printf(
      "{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":\".\",\"session_id\":\"%s\",\"tools\":["
      "\"Bash\"],"
      "\"model\":\"claude-sonnet-4-5\"}\n",
      session);
  printf(
      "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
      "\"text\":\"Done.\\nCTXKIT-TASK: DONE\"}]},\"session_id\":\"%s\"}\n",
      session);
  printf(
      "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"duration_ms\":1,\"num_"
      "turns\":1,"
      "\"result\":\"Done.\\nCTXKIT-TASK: DONE\",\"session_id\":\"%s\",\"total_cost_usd\":0.001,"
      "\"usage\":{\"input_tokens\":100,\"cache_creation_input_tokens\":0,\"cache_read_input_"
      "tokens\":0,\"output_tokens\":20},"
      "\"modelUsage\":{\"claude-sonnet-4-5\":{\"inputTokens\":100,\"outputTokens\":20,"
      "\"cacheReadInputTokens\":0,"
      "\"cacheCreationInputTokens\":0}}}\n",
      session);
  fflush(stdout);
  const char* exit_ms = getenv("CTXKIT_STANDIN_EXIT_MS");
  long ms = exit_ms ? strtol(exit_ms, NULL, 10) : 0;
  if (ms > 0) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
  return 0;
}
