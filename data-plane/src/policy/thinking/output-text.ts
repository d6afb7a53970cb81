// The output text outbound policies judge: the answer text, then the reasoning the model shows beside it
// (thinking blocks, thought parts, tool plans), joined by a blank line. Completion parts are mapped
// first and reasoning parts after them, so one partRedactor over this text cuts spans for both.

export function governedOutputText(completionText: string, reasoningText: string | undefined): string {
  if (!reasoningText) return completionText;
  return completionText === "" ? reasoningText : `${completionText}\n\n${reasoningText}`;
}
