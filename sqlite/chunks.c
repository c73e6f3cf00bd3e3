/*
** shelfmark_chunks(sql, a1, ..., a16): a table-valued function that runs
** one read-only statement on the connection it is called on, with the
** values given bound to its parameters, and returns its rows encoded many
** to a value: each row of shelfmark_chunks is one BLOB (column chunk) of
** about CHUNK_BYTES holding as many whole rows of the statement as fit
** (a row larger than that is a chunk of its own). chunks.go reads it.
**
** Columns at and size are where the chunk is in the cursor's memory and
** its length: a reader in the same process may read it there, without the
** copy that column chunk makes, until it steps shelfmark_chunks again or
** ends the statement (the cursor's next chunk is made in the same memory,
** which may move, and its end frees it).
**
** Why: the driver hands Go a statement's rows one at a time, and each row
** costs a crossing from Go into C, a Go value per column (boxed into an
** interface), and database/sql's conversion of each into its destination.
** For a page of a book's file rows (thousands of rows of twenty columns)
** that was several times the B-tree work itself (10.4 ms to read a
** book's 3,601 file rows into Go, 1.5 ms for SQLite to count them). A chunk is one
** crossing for hundreds of rows, and Go decodes it straight into the
** destinations.
**
** A chunk is the statement's column count (4 bytes) and then its rows,
** each value a tag byte and its bytes, little-endian:
**
**     0  NULL
**     1  INTEGER, 8 bytes
**     2  FLOAT, the 8 bytes of its IEEE 754 binary64 form
**     3  TEXT, its length (4 bytes) and its UTF-8 bytes
**     4  BLOB, its length (4 bytes) and its bytes
**
** The statement is prepared once per connection and kept (up to
** CHUNKS_CACHE of them, the least recently used given up first); the
** cursor takes it, resets it when it closes, and a cursor that finds it
** taken by another (the same statement run inside a loop over its own
** rows) prepares one of its own. The kept statements are finalized when
** the connection closes: SQLite disconnects every virtual table before
** it checks for statements still open. Only read-only statements are run
** (sqlite3_stmt_readonly), and the function is DIRECTONLY: no view or
** trigger of a database can call it.
**
** An error of the statement (an interruption, a syntax error) is the
** error of the step of shelfmark_chunks that met it, with the message of
** the statement's.
*/
#include "chunks.h"
#include <stdint.h>
#include <string.h>

#define CHUNKS_ARGS 16     /* values a statement can be given */
#define CHUNKS_CACHE 16    /* statements kept per connection */
#define CHUNK_BYTES 65536  /* a chunk ends with the first row past this */
#define CHUNKS_COLUMNS 3   /* chunk, at and size: the columns before sql */

typedef struct ChunksStmt ChunksStmt;
struct ChunksStmt {
  char *zSql;             /* the statement's text, or 0 for a free slot */
  int nSql;               /* its length in bytes */
  sqlite3_stmt *pStmt;    /* the statement, prepared */
  int inUse;              /* a cursor is running it */
  sqlite3_uint64 used;    /* when it was last taken, for eviction */
};

typedef struct ChunksVtab ChunksVtab;
struct ChunksVtab {
  sqlite3_vtab base;
  sqlite3 *db;
  sqlite3_uint64 tick;
  ChunksStmt aStmt[CHUNKS_CACHE];
};

typedef struct ChunksCursor ChunksCursor;
struct ChunksCursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *pStmt;    /* the statement being run, or 0 */
  ChunksStmt *pSlot;      /* its slot in the cache, or 0 if the cursor's own */
  unsigned char *a;       /* the current chunk */
  sqlite3_int64 n;        /* its length */
  sqlite3_int64 nAlloc;   /* bytes allocated at a */
  sqlite3_int64 iRow;     /* the chunk's number, from 1 */
  int eof;                /* there is no current chunk */
  int done;               /* the statement has given its last row */
};

static int chunksConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
    sqlite3_vtab **ppVtab, char **pzErr){
  (void)pAux; (void)argc; (void)argv; (void)pzErr;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(chunk BLOB, at INTEGER, size INTEGER, sql HIDDEN,"
      " a1 HIDDEN, a2 HIDDEN, a3 HIDDEN, a4 HIDDEN, a5 HIDDEN, a6 HIDDEN, a7 HIDDEN, a8 HIDDEN,"
      " a9 HIDDEN, a10 HIDDEN, a11 HIDDEN, a12 HIDDEN, a13 HIDDEN, a14 HIDDEN, a15 HIDDEN, a16 HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  ChunksVtab *p = (ChunksVtab*)sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  *ppVtab = &p->base;
  return SQLITE_OK;
}

static int chunksDisconnect(sqlite3_vtab *pVtab){
  ChunksVtab *p = (ChunksVtab*)pVtab;
  for(int i=0; i<CHUNKS_CACHE; i++){
    if( p->aStmt[i].zSql ){
      sqlite3_finalize(p->aStmt[i].pStmt);
      sqlite3_free(p->aStmt[i].zSql);
    }
  }
  sqlite3_free(p->base.zErrMsg);
  sqlite3_free(p);
  return SQLITE_OK;
}

/*
** The plan: the statement (column sql) and the values a1..an given, each
** by equality, passed to xFilter in that order; idxNum is n. Without the
** statement there is no plan.
*/
static int chunksBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *p){
  (void)pVtab;
  int aIdx[CHUNKS_ARGS+1];
  for(int i=0; i<=CHUNKS_ARGS; i++) aIdx[i] = -1;
  for(int i=0; i<p->nConstraint; i++){
    int col = p->aConstraint[i].iColumn - CHUNKS_COLUMNS; /* 0: sql, then the values */
    if( col<0 || col>CHUNKS_ARGS || p->aConstraint[i].op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( !p->aConstraint[i].usable ) return SQLITE_CONSTRAINT;
    if( aIdx[col]<0 ) aIdx[col] = i;
  }
  if( aIdx[0]<0 ) return SQLITE_CONSTRAINT;
  int n = 0;
  while( n<CHUNKS_ARGS && aIdx[n+1]>=0 ) n++;
  for(int i=0; i<=n; i++){
    p->aConstraintUsage[aIdx[i]].argvIndex = i+1;
    p->aConstraintUsage[aIdx[i]].omit = 1;
  }
  p->idxNum = n;
  p->estimatedCost = 1.0;
  p->estimatedRows = 1;
  return SQLITE_OK;
}

static int chunksOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  (void)pVtab;
  ChunksCursor *c = (ChunksCursor*)sqlite3_malloc64(sizeof(*c));
  if( c==0 ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  c->eof = 1;
  *ppCursor = &c->base;
  return SQLITE_OK;
}

/* chunksRelease gives back the statement the cursor runs: reset into its
** slot, or finalized if it was the cursor's own. */
static void chunksRelease(ChunksCursor *c){
  if( c->pStmt==0 ) return;
  if( c->pSlot ){
    sqlite3_reset(c->pStmt);
    c->pSlot->inUse = 0;
  }else{
    sqlite3_finalize(c->pStmt);
  }
  c->pStmt = 0;
  c->pSlot = 0;
}

static int chunksClose(sqlite3_vtab_cursor *cur){
  ChunksCursor *c = (ChunksCursor*)cur;
  chunksRelease(c);
  sqlite3_free(c->a);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* chunksFail sets the table's error message and returns rc. */
static int chunksFail(sqlite3_vtab_cursor *cur, int rc, const char *zMsg){
  sqlite3_vtab *v = cur->pVtab;
  sqlite3_free(v->zErrMsg);
  v->zErrMsg = sqlite3_mprintf("%s", zMsg);
  return rc;
}

/* chunksTake gives the cursor the statement zSql: its kept one when free,
** else one prepared now (and kept, unless the kept one is in use). */
static int chunksTake(ChunksCursor *c, const char *zSql, int nSql){
  ChunksVtab *p = (ChunksVtab*)c->base.pVtab;
  ChunksStmt *pFree = 0;
  int taken = 0;
  for(int i=0; i<CHUNKS_CACHE; i++){
    ChunksStmt *s = &p->aStmt[i];
    if( s->zSql && s->nSql==nSql && memcmp(s->zSql, zSql, nSql)==0 ){
      if( s->inUse ){ taken = 1; continue; }
      s->inUse = 1;
      s->used = ++p->tick;
      c->pStmt = s->pStmt;
      c->pSlot = s;
      return SQLITE_OK;
    }
    if( s->inUse ) continue;
    if( pFree==0 || (pFree->zSql && (s->zSql==0 || s->used<pFree->used)) ) pFree = s;
  }
  sqlite3_stmt *pStmt = 0;
  const char *zTail = 0;
  int rc = sqlite3_prepare_v3(p->db, zSql, nSql, SQLITE_PREPARE_PERSISTENT, &pStmt, &zTail);
  if( rc!=SQLITE_OK ) return chunksFail(&c->base, rc, sqlite3_errmsg(p->db));
  if( pStmt==0 ) return chunksFail(&c->base, SQLITE_ERROR, "shelfmark_chunks: no statement");
  while( zTail && zTail<zSql+nSql && (*zTail==' ' || *zTail=='\n' || *zTail=='\t' || *zTail=='\r' || *zTail==';') ) zTail++;
  if( zTail && zTail<zSql+nSql ){
    sqlite3_finalize(pStmt);
    return chunksFail(&c->base, SQLITE_ERROR, "shelfmark_chunks: one statement only");
  }
  if( !sqlite3_stmt_readonly(pStmt) ){
    sqlite3_finalize(pStmt);
    return chunksFail(&c->base, SQLITE_ERROR, "shelfmark_chunks: the statement writes; it runs reads only");
  }
  c->pStmt = pStmt;
  if( taken || pFree==0 ) return SQLITE_OK; /* the cursor's own */
  char *zCopy = (char*)sqlite3_malloc64((sqlite3_uint64)nSql + 1);
  if( zCopy==0 ) return SQLITE_OK; /* not kept */
  memcpy(zCopy, zSql, nSql);
  zCopy[nSql] = 0;
  if( pFree->zSql ){
    sqlite3_finalize(pFree->pStmt);
    sqlite3_free(pFree->zSql);
  }
  pFree->zSql = zCopy;
  pFree->nSql = nSql;
  pFree->pStmt = pStmt;
  pFree->inUse = 1;
  pFree->used = ++p->tick;
  c->pSlot = pFree;
  return SQLITE_OK;
}

/* chunksRoom makes room for n more bytes of the chunk. */
static int chunksRoom(ChunksCursor *c, sqlite3_int64 n){
  if( c->n+n<=c->nAlloc ) return SQLITE_OK;
  sqlite3_int64 want = c->nAlloc ? c->nAlloc : CHUNK_BYTES+4096;
  while( want<c->n+n ) want *= 2;
  unsigned char *a = (unsigned char*)sqlite3_realloc64(c->a, (sqlite3_uint64)want);
  if( a==0 ) return SQLITE_NOMEM;
  c->a = a;
  c->nAlloc = want;
  return SQLITE_OK;
}

static void chunksPut64(unsigned char *a, sqlite3_uint64 v){
  for(int i=0; i<8; i++){ a[i] = (unsigned char)v; v >>= 8; }
}

static void chunksPut32(unsigned char *a, unsigned int v){
  for(int i=0; i<4; i++){ a[i] = (unsigned char)v; v >>= 8; }
}

/* chunksFill steps the statement for the next chunk: eof when it has no
** more rows. */
static int chunksFill(ChunksCursor *c){
  sqlite3_stmt *st = c->pStmt;
  int nCol = sqlite3_column_count(st);
  int nRow = 0;
  c->n = 0;
  if( chunksRoom(c, 4)!=SQLITE_OK ) return SQLITE_NOMEM;
  chunksPut32(c->a, (unsigned int)nCol);
  c->n = 4;
  while( c->n<CHUNK_BYTES ){
    int rc = sqlite3_step(st);
    if( rc==SQLITE_DONE ){ c->done = 1; break; }
    if( rc!=SQLITE_ROW ){
      return chunksFail(&c->base, rc, sqlite3_errmsg(((ChunksVtab*)c->base.pVtab)->db));
    }
    for(int i=0; i<nCol; i++){
      /* the column's value, read through the value interface: each
      ** sqlite3_column_ call takes the connection's mutex again, which the
      ** step of shelfmark_chunks holds for all of this already */
      sqlite3_value *pVal = sqlite3_column_value(st, i);
      int t = sqlite3_value_type(pVal);
      if( t==SQLITE_INTEGER || t==SQLITE_FLOAT ){
        if( chunksRoom(c, 9)!=SQLITE_OK ) return SQLITE_NOMEM;
        sqlite3_uint64 v;
        if( t==SQLITE_INTEGER ){
          v = (sqlite3_uint64)sqlite3_value_int64(pVal);
        }else{
          double d = sqlite3_value_double(pVal);
          memcpy(&v, &d, 8);
        }
        c->a[c->n] = (unsigned char)t;
        chunksPut64(c->a+c->n+1, v);
        c->n += 9;
      }else if( t==SQLITE_TEXT || t==SQLITE_BLOB ){
        const void *z = t==SQLITE_TEXT ? (const void*)sqlite3_value_text(pVal) : sqlite3_value_blob(pVal);
        int nz = sqlite3_value_bytes(pVal);
        if( z==0 && nz>0 ) return SQLITE_NOMEM;
        if( chunksRoom(c, 5+(sqlite3_int64)nz)!=SQLITE_OK ) return SQLITE_NOMEM;
        c->a[c->n] = (unsigned char)t;
        chunksPut32(c->a+c->n+1, (unsigned int)nz);
        if( nz>0 ) memcpy(c->a+c->n+5, z, nz);
        c->n += 5+nz;
      }else{
        if( chunksRoom(c, 1)!=SQLITE_OK ) return SQLITE_NOMEM;
        c->a[c->n++] = 0;
      }
    }
    nRow++;
  }
  c->eof = nRow==0;
  c->iRow++;
  return SQLITE_OK;
}

static int chunksFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
    int argc, sqlite3_value **argv){
  (void)idxNum; (void)idxStr;
  ChunksCursor *c = (ChunksCursor*)cur;
  chunksRelease(c);
  c->eof = 1;
  c->done = 0;
  c->iRow = 0;
  if( argc<1 ) return chunksFail(cur, SQLITE_ERROR, "shelfmark_chunks: no statement");
  const char *zSql = (const char*)sqlite3_value_text(argv[0]);
  int nSql = sqlite3_value_bytes(argv[0]);
  if( zSql==0 || nSql==0 ) return chunksFail(cur, SQLITE_ERROR, "shelfmark_chunks: no statement");
  int rc = chunksTake(c, zSql, nSql);
  if( rc!=SQLITE_OK ) return rc;
  if( argc-1>sqlite3_bind_parameter_count(c->pStmt) ){
    chunksRelease(c);
    return chunksFail(cur, SQLITE_ERROR, "shelfmark_chunks: more values than the statement has parameters");
  }
  sqlite3_clear_bindings(c->pStmt);
  for(int i=1; i<argc; i++){
    rc = sqlite3_bind_value(c->pStmt, i, argv[i]);
    if( rc!=SQLITE_OK ){
      chunksRelease(c);
      return chunksFail(cur, rc, "shelfmark_chunks: a value could not be bound");
    }
  }
  return chunksFill(c);
}

static int chunksNext(sqlite3_vtab_cursor *cur){
  ChunksCursor *c = (ChunksCursor*)cur;
  if( c->done ){
    c->eof = 1;
    return SQLITE_OK;
  }
  return chunksFill(c);
}

static int chunksEof(sqlite3_vtab_cursor *cur){
  return ((ChunksCursor*)cur)->eof;
}

static int chunksColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  ChunksCursor *c = (ChunksCursor*)cur;
  switch( i ){
    case 0: sqlite3_result_blob64(ctx, c->a, (sqlite3_uint64)c->n, SQLITE_TRANSIENT); break;
    case 1: sqlite3_result_int64(ctx, (sqlite3_int64)(intptr_t)c->a); break;
    case 2: sqlite3_result_int64(ctx, c->n); break;
    default: sqlite3_result_null(ctx);
  }
  return SQLITE_OK;
}

static int chunksRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  *pRowid = ((ChunksCursor*)cur)->iRow;
  return SQLITE_OK;
}

/* eponymous only (no xCreate): there is no CREATE VIRTUAL TABLE of it */
static const sqlite3_module chunksModule = {
  0, 0, chunksConnect, chunksBestIndex, chunksDisconnect, 0,
  chunksOpen, chunksClose, chunksFilter, chunksNext, chunksEof, chunksColumn, chunksRowid,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static int chunksInit(sqlite3 *db, char **pzErr, const void *pThunk){
  (void)pzErr; (void)pThunk;
  return sqlite3_create_module_v2(db, "shelfmark_chunks", &chunksModule, 0, 0);
}

int shelfmark_register_chunks(void){
  return sqlite3_auto_extension((void(*)(void))chunksInit);
}
