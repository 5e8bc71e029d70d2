-- The fuel cards assigned to an asset (PATCH /assets/{id} fuelCardNumbers): a card is one asset's in the
-- organisation, so a fuel-card statement's row finds its asset by card.

CREATE TABLE "asset_fuel_cards" (
    "orgId" TEXT NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "cardNumber" TEXT NOT NULL,
    "assetId" TEXT NOT NULL REFERENCES "assets"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY ("orgId", "cardNumber")
);
CREATE INDEX "asset_fuel_cards_orgId_assetId_idx" ON "asset_fuel_cards"("orgId", "assetId");
