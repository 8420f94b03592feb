#include "apps/report_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-report", argc, argv, ctxkit::apps::run_report);
}
