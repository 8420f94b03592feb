#include "apps/lineage_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-lineage", argc, argv, ctxkit::apps::run_lineage);
}
