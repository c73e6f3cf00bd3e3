/*
** The declarations of SQLite's public-domain header sqlite3.h (3.54) that
** both rank.c (through fts5.h) and chunks.c (through chunks.h) need: the
** opaque types, the result codes and the functions. The functions are
** those of the SQLite that github.com/mattn/go-sqlite3 compiles into the
** same binary.
*/
#ifndef SHELFMARK_SQLITE3API_H
#define SHELFMARK_SQLITE3API_H

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef struct sqlite3_context sqlite3_context;
typedef struct sqlite3_value sqlite3_value;
typedef struct sqlite3_module sqlite3_module;
typedef long long int sqlite3_int64;
typedef unsigned long long int sqlite3_uint64;

#define SQLITE_OK 0
#define SQLITE_ERROR 1
#define SQLITE_NOMEM 7
#define SQLITE_ROW 100

int sqlite3_auto_extension(void(*xEntryPoint)(void));
int sqlite3_step(sqlite3_stmt*);
int sqlite3_finalize(sqlite3_stmt *pStmt);
void *sqlite3_malloc64(sqlite3_uint64);
void *sqlite3_realloc64(void*, sqlite3_uint64);
void sqlite3_free(void*);

#endif
