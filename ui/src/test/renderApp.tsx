import { act, render, screen } from "@testing-library/react";
import { App } from "../App";
import { start } from "../app/store";
import { fakeBackend } from "./fakeBackend";

export type FakeBackend = ReturnType<typeof fakeBackend>;

/** The app over a fake backend (`setup` prepares it first), started, once `ready` is shown. */
export async function renderApp(setup?: (backend: FakeBackend) => void, ready = "preview-messages"): Promise<FakeBackend> {
  const backend = fakeBackend();
  setup?.(backend);
  render(<App />);
  await act(async () => {
    await start();
  });
  await screen.findByTestId(ready);
  return backend;
}
