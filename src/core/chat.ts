// The chat message: the one shape shared by chat-template rendering (templates), LLM judges
// (judge/llm), the backend interface (backend.ts) and the endpoint client. A use that admits
// fewer roles names them: the backend's conversation carries its system text separately, so its
// messages are ChatMessage<'user' | 'assistant'>.

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage<R extends ChatRole = ChatRole> {
  role: R;
  content: string;
}
