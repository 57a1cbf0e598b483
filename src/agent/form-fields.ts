/** The fields of a form a press would send, as submit-check.ts reads them and the task's memory keeps them. */

/** An empty field of the form a press would send, as the observation names it. */
export interface EmptyField {
  index: number;
  label: string;
  kind: 'text' | 'file' | 'choice';
}

/** A choice of the form (a select, a radio group): what it is on and what it offers. */
export interface ChoiceField {
  /** The select's index, or the index of the group's first radio. */
  index: number;
  label: string;
  /** The chosen option's text ('' when none is). */
  current: string;
  /** Each option's text and the index to choose it by (a radio's own, the select's). */
  options: { text: string; index: number }[];
}

/** A filled text field of the form: its label and what it holds. */
export interface FilledField {
  index: number;
  label: string;
  value: string;
}

/** A checkbox of the form: its label and whether it is ticked. */
export interface TickField {
  index: number;
  label: string;
  checked: boolean;
}

/** A choice on another option than the one the task names, or a text field holding another value than the task sets it to. */
export interface UnchosenField {
  index: number;
  label: string;
  current: string;
  /** A text field (typed into), not a choice. */
  typed?: boolean;
  /** A checkbox left unticked that the task asks to tick, not a choice. */
  tick?: boolean;
  /** The option the task names, and the index to choose it by. */
  named: { text: string; index: number };
}
