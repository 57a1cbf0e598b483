import { TaskMemory } from './task-memory';

describe('the figures a task has seen', () => {
  it('are those of pages and of what tools read, not those of the service\'s own notes', () => {
    const memory = new TaskMemory();
    memory.addObservation('Visible text:\nInvoice #1015: €455.95', 'Observation (step 1):\nVisible text:\nInvoice #1015: €455.95', undefined);
    // a note that quotes the agent's words does not make "€455.95" seen on a line of #1025
    memory.answerCall('call_1', 'Not done yet: your own words answer the task: you wrote "invoice #1025 is €455.95", and this page shows …');
    expect(memory.figures.misplaced('The amount of invoice #1025 is €455.95.')).toEqual({ amount: '455.95', item: '#1025', line: 'Invoice #1015: €455.95' });
    // what a tool read from the page is seen
    memory.answerCall('call_2', 'Best match for "Invoice #1025":\nInvoice #1025: €512.40', true);
    expect(memory.figures.unseen('€512.40')).toEqual([]);
    expect(memory.figures.unseen('€600.00')).toEqual(['600.00']);
  });
});
