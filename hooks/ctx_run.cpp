#include "apps/run_app.hpp"

int main(int argc, char** argv) { return ctxkit::guarded_main("ctx-run", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_runner); }
