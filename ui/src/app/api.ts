// The one door to Rust: the generated bindings, with their `Result` turned into a thrown
// `CommandError` that keeps the backend's `{ code, message }`.
import { commands, type AppError } from "../bindings";

export class CommandError extends Error {
  code: string;
  constructor(error: AppError) {
    super(error.message);
    this.code = error.code;
  }
}

type Result<T> = { status: "ok"; data: T } | { status: "error"; error: AppError };

async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const r = await call;
  if (r.status === "error") throw new CommandError(r.error);
  return r.data;
}

type Commands = typeof commands;
type Unwrapped = {
  [K in keyof Commands]: Commands[K] extends (...args: infer A) => Promise<Result<infer T>>
    ? (...args: A) => Promise<T>
    : never;
};

/** Every command of `bindings.ts`, resolving to its data or throwing a `CommandError`. */
export const api: Unwrapped = new Proxy({} as Unwrapped, {
  get(_, name: string) {
    const command = (commands as Record<string, (...args: unknown[]) => Promise<Result<unknown>>>)[name];
    return (...args: unknown[]) => unwrap(command(...args));
  },
});

export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === "object" && e && "message" in e) return String((e as { message: unknown }).message);
  return String(e);
}
