#include <store/state_store.hpp>
int main() { return 0; }
