// The part of better-sqlite3's API the SQLite peer uses. The package ships no types and
// @types/better-sqlite3 is not a dependency; this keeps the peer strictly typed without one.
declare module 'better-sqlite3' {
  namespace Database {
    interface RunResult {
      changes: number;
      lastInsertRowid: number | bigint;
    }
    interface Statement {
      run(...params: unknown[]): RunResult;
      get(...params: unknown[]): unknown;
      all(...params: unknown[]): unknown[];
      iterate(...params: unknown[]): IterableIterator<unknown>;
      pluck(toggle?: boolean): this;
      raw(toggle?: boolean): this;
    }
    interface Database {
      prepare(sql: string): Statement;
      exec(sql: string): this;
      pragma(sql: string, options?: { simple?: boolean }): unknown;
      transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
      close(): this;
      readonly open: boolean;
    }
    interface Options {
      readonly?: boolean;
      fileMustExist?: boolean;
    }
  }
  const Database: new (path: string, options?: Database.Options) => Database.Database;
  export default Database;
}
