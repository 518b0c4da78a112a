import type { enMemory } from "./enMemory";

// 会话编辑器中摘要与长期记忆的简体中文（RULES 9.9）。
export const zhMemory: Record<keyof typeof enMemory, string> = {
  "sessionMemory.summary": "摘要",
  "sessionMemory.covers": "涵盖存储的消息 #{first} 至 #{last}",
  "sessionMemory.editedByHand": "已手动编辑",
  "sessionMemory.noSummary": "还没有摘要。",
  "sessionMemory.saveEdit": "保存修改",
  "sessionMemory.summarizeNow": "立即摘要",
  "sessionMemory.summarizing": "正在摘要…",
  "sessionMemory.older": "较早的摘要（{count}）",
  "sessionMemory.restore": "恢复",
  "sessionMemory.connection": "连接",
  "sessionMemory.model": "模型",
  "sessionMemory.defaultModel": "连接的默认模型",
  "sessionMemory.summaryBadge": "摘要 #{first}–#{last}",
  "sessionMemory.index": "长期记忆",
  "sessionMemory.status": "已索引 {indexed}/{messages} 条消息，模型 {model}，连接 {connection}",
  "sessionMemory.notIndexed": "尚未索引（{messages} 条消息）。",
  "sessionMemory.pending": "{count} 条待索引",
  "sessionMemory.indexNow": "立即索引",
  "sessionMemory.indexing": "正在索引…",
  "sessionMemory.progress": "已嵌入 {done}/{total}",
  "sessionMemory.indexed": "已用 {model} 嵌入 {embedded} 条消息。",
  "sessionMemory.reindexed": "已用 {model} 重新索引：嵌入 {embedded} 条消息（旧向量已删除）。",
  "sessionMemory.modelChange": "与 {model} 不同的模型：整个会话将从头重新索引。",
  "sessionMemory.recallHelp": "索引后，预览会通过同一连接用下一条用户消息搜索这些消息，并放入最接近的几条（“记忆”处理器）。",
};
