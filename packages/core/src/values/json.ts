/** The values a store saves: JSON, and the types that say what JSON can carry. */
/** A value JSON can carry exactly. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** Free-form facts about a checkpoint (a JSON object). */
export type Metadata = { [key: string]: JsonValue };

/** What JSON cannot carry, and so what `JsonCompatible` turns into `never`. */
type NotJson =
  | bigint
  | symbol
  | undefined
  | ((...args: never[]) => unknown)
  | Date
  | ReadonlyMap<unknown, unknown>
  | ReadonlySet<unknown>;

/**
 * `T` itself where JSON carries it, with `never` in place of every part it cannot: functions,
 * symbols, bigints, `Date`, `Map`, `Set`, and `undefined` anywhere but as an object property
 * (which is dropped, as `JSON.stringify` drops it). Unlike `JsonValue`, it takes interfaces,
 * which have no index signature. A value of type `T` is assignable to it exactly when every
 * part of `T` is JSON; `unknown` is not, and `any` is left to the check at run time, which
 * also refuses what types cannot tell apart (NaN, Infinity, class instances, cycles).
 */
export type JsonCompatible<T> = 0 extends 1 & T
  ? T
  : unknown extends T
    ? never
    : T extends JsonValue
      ? T
      : T extends NotJson
        ? never
        : T extends readonly unknown[]
          ? { [I in keyof T]: JsonCompatible<T[I]> }
          : { [K in keyof T]: K extends symbol ? never : JsonProperty<T[K]> };

/** An object property: `undefined` is allowed there (the property is dropped). */
type JsonProperty<P> = P extends undefined ? undefined : JsonCompatible<P>;

/**
 * What a store (or state scope) whose values are declared as `T` takes for a value of type
 * `D`: any JSON-compatible `D`, inferred from the value, when `T` is left as `JsonValue`;
 * otherwise `D` is `T` (or the type given to the call), and the value must be one.
 */
export type JsonInput<T, D> = JsonValue extends T
  ? JsonCompatible<D>
  : // The tuple keeps TypeScript from inferring D from the value, so that it stays T.
    JsonCompatible<[D][D extends unknown ? 0 : never]>;
