/** The workflow bundle's entry: every workflow type the workers register. */
export { sessionWorkflow } from './session.workflow';
export { triggerRunWorkflow } from './trigger-run.workflow';
export { chatDeliveryWorkflow, webhookDeliveryWorkflow } from './webhook-delivery.workflow';
