#include "apps/archive_mcp_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-archive-mcp", argc, argv, ctxkit::apps::run_archive_mcp);
}
