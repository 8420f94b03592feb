#include "apps/gate_app.hpp"

int main(int argc, char** argv) { return ctxkit::guarded_main("ctx-gate", argc, argv, ctxkit::ExitCode::ok, ctxkit::run_gate); }
