import { afterEach } from "vitest";
import { cleanup } from "@testing-library/react";
import { clearMocks } from "@tauri-apps/api/mocks";
import { resetListView } from "../components/lists/listView";

afterEach(() => {
  cleanup();
  clearMocks();
  resetListView();
});
