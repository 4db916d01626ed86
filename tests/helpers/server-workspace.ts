import { afterEach, beforeEach } from 'vitest';
import type { ChatServer } from '../fakes/chat-server.js';
import { tempWorkspace } from '../fakes/fixtures.js';

/**
 * A fresh workspace for each test, and the chat-completions server a test may start (`t.server =
 * await startChatServer(…)`), closed after it; the workspace is removed after it.
 */
export function workspaceAndServer(): { ws: Awaited<ReturnType<typeof tempWorkspace>>; server: ChatServer | undefined } {
  const t = { ws: undefined as unknown as Awaited<ReturnType<typeof tempWorkspace>>, server: undefined as ChatServer | undefined };
  beforeEach(async () => {
    t.ws = await tempWorkspace();
  });
  afterEach(async () => {
    await t.server?.close();
    t.server = undefined;
    await t.ws.cleanup();
  });
  return t;
}
