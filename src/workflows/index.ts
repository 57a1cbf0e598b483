/** The workflow bundle's entry: every workflow type the workers register. */
export { sessionWorkflow } from './session.workflow';
