/**
 * What packages/payments (the payment gateway over Stripe) takes from the domain: the gateway
 * interface it implements and the domain's terms for payments. `@sdx/domain/payments`.
 */

export {
  PaymentFailed,
  type ChargeDispute,
  type ChargeRefund,
  type CompletedCheckout,
  type HostedCheckout,
  type Metadata,
  type PackCheckoutRequest,
  type PaymentEvent,
  type PaymentFailureKind,
  type PaymentGateway,
  type PaymentOutcome,
  type PricedItem,
  type ProviderInvoice,
  type ProviderSubscription,
  type SavedCard,
  type SavedCardCharge,
  type SubscriptionCheckoutRequest,
  type SubscriptionPriceChange,
} from '../payment-gateway';
