# Every dependency comes from a Debian -dev package.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(Threads REQUIRED)

# The hooks run on every tool call, so process start-up matters: link SQLite statically when the
# distribution ships the archive, and use fmt and toml++ header-only (no shared C++ libraries to
# load and relocate at start).
find_library(CTXKIT_SQLITE3_STATIC NAMES libsqlite3.a)
add_library(ctxkit_sqlite INTERFACE)
if(CTXKIT_SQLITE3_STATIC AND NOT CTXKIT_SANITIZE_THREAD)
  target_link_libraries(ctxkit_sqlite INTERFACE ${CTXKIT_SQLITE3_STATIC} ${CMAKE_DL_LIBS} m Threads::Threads)
  target_include_directories(ctxkit_sqlite INTERFACE ${SQLite3_INCLUDE_DIRS})
else()
  target_link_libraries(ctxkit_sqlite INTERFACE SQLite3::SQLite3)
endif()
