/*
** shelfmark_rank(fts, w0, w1, ...): the relevance of an FTS5 row, an
** auxiliary function of FTS5 registered on every connection (rank.go).
**
** It is FTS5's own bm25() (fts5_aux.c) with every inverse document
** frequency taken as 1, and the sign turned so that higher is better:
** for each phrase p of the query, f the sum over its occurrences in the
** row of their column's weight (the arguments after the table; 1.0 where
** one is missing), D the row's length in tokens and avgdl the mean over
** the table,
**
**     f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))
**
** summed, with bm25()'s k1 = 1.2 and b = 0.75. What it leaves out is what
** makes bm25() cost more the more documents match: the IDF counts, once
** per statement, the documents that hold each phrase (a pass over the
** phrase's whole list of documents). A search reads a window of a fixed
** number of matches, so without that count its cost no longer grows with
** the index. Every phrase of a query must match (FTS5's implicit AND), so
** the IDF would only weigh the phrases of one row against each other;
** PostgreSQL's ts_rank_cd has no IDF either. avgdl is the two totals FTS5
** keeps for the table, read once per statement.
*/
#include "fts5.h"

int shelfmarkRegisterStem(fts5_api *api);

#define RANK_K1 1.2
#define RANK_B 0.75

/* the table's mean row length in tokens, kept for the statement */
static int rankAvgdl(const Fts5ExtensionApi *api, Fts5Context *fts, double *out){
  double *p = (double*)api->xGetAuxdata(fts, 0);
  if( p==0 ){
    sqlite3_int64 nRow = 0, nToken = 0;
    int rc = api->xRowCount(fts, &nRow);
    if( rc==SQLITE_OK ) rc = api->xColumnTotalSize(fts, -1, &nToken);
    if( rc!=SQLITE_OK ) return rc;
    p = (double*)sqlite3_malloc64(sizeof(double));
    if( p==0 ) return SQLITE_NOMEM;
    *p = nRow>0 ? (double)nToken/(double)nRow : 1.0;
    if( *p<1.0 ) *p = 1.0;
    rc = api->xSetAuxdata(fts, p, sqlite3_free);
    if( rc!=SQLITE_OK ) return rc;
  }
  *out = *p;
  return SQLITE_OK;
}

static void shelfmarkRank(const Fts5ExtensionApi *api, Fts5Context *fts,
    sqlite3_context *ctx, int nVal, sqlite3_value **apVal){
  double avgdl = 1.0;
  int rc = rankAvgdl(api, fts, &avgdl);
  int nPhrase = api->xPhraseCount(fts);
  double local[16];
  double *freq = local;
  if( rc==SQLITE_OK && nPhrase>16 ){
    freq = (double*)sqlite3_malloc64(sizeof(double)*(sqlite3_uint64)nPhrase);
    if( freq==0 ) rc = SQLITE_NOMEM;
  }
  for(int i=0; rc==SQLITE_OK && i<nPhrase; i++) freq[i] = 0.0;
  int nInst = 0;
  if( rc==SQLITE_OK ) rc = api->xInstCount(fts, &nInst);
  for(int i=0; rc==SQLITE_OK && i<nInst; i++){
    int ip, ic, io;
    rc = api->xInst(fts, i, &ip, &ic, &io);
    if( rc==SQLITE_OK && ip>=0 && ip<nPhrase ){
      freq[ip] += ic<nVal ? sqlite3_value_double(apVal[ic]) : 1.0;
    }
  }
  int nTok = 0;
  if( rc==SQLITE_OK ) rc = api->xColumnSize(fts, -1, &nTok);
  double score = 0.0;
  if( rc==SQLITE_OK ){
    double norm = RANK_K1*(1.0 - RANK_B + RANK_B*(double)nTok/avgdl);
    for(int i=0; i<nPhrase; i++){
      score += freq[i]*(RANK_K1 + 1.0)/(freq[i] + norm);
    }
  }
  if( freq!=local ) sqlite3_free(freq);
  if( rc!=SQLITE_OK ){ sqlite3_result_error_code(ctx, rc); return; }
  sqlite3_result_double(ctx, score);
}

/*
** the connection's fts5_api, or 0 where FTS5 is not compiled in (asked
** first, so that no statement fails: a failed one would leave its error
** on the connection being opened)
*/
static fts5_api *fts5Api(sqlite3 *db){
  fts5_api *api = 0;
  sqlite3_stmt *stmt = 0;
  if( !sqlite3_compileoption_used("ENABLE_FTS5") ) return 0;
  /* the statement waits for another connection's lock as the store's own
  ** statements do (the driver sets the same timeout once the connection
  ** is open; SQLite fails the open if this statement fails) */
  sqlite3_busy_timeout(db, 10000);
  if( sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, 0)==SQLITE_OK ){
    sqlite3_bind_pointer(stmt, 1, (void*)&api, "fts5_api_ptr", 0);
    sqlite3_step(stmt);
  }
  sqlite3_finalize(stmt);
  return api;
}

/*
** The entry point SQLite calls on each connection it opens: it turns on
** the query planner stability guarantee, and adds the function where
** FTS5 is there (the store's own check of FTS5 refuses a
** database without it, with a clear error), and never fails the open.
*/
static int shelfmarkRankInit(sqlite3 *db, char **pzErr, const void *pThunk){
  (void)pzErr; (void)pThunk;
  /* the query planner stability guarantee: a statement is compiled once,
  ** whatever values are bound to it later. Without it SQLite compiles a
  ** statement again on every bind of a value its plan read (a bound
  ** LIMIT, a value compared with a partial index's condition), which
  ** for the search statement cost about a millisecond a search
  ** (TestPlannedOnce) */
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_QPSG, 1, (int*)0);
  fts5_api *api = fts5Api(db);
  if( api==0 || api->iVersion<2 ) return SQLITE_OK;
  api->xCreateFunction(api, "shelfmark_rank", 0, shelfmarkRank, 0);
  shelfmarkRegisterStem(api); /* the tokenizer shelfmark (stem.c) */
  return SQLITE_OK;
}

int shelfmark_register_rank(void){
  return sqlite3_auto_extension((void(*)(void))shelfmarkRankInit);
}
