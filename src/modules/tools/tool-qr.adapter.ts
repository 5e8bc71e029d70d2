export interface QrImage {
  contentType: string;
  body: Buffer | string;
}

/** The label image: a QR code of the tool's public scan link, `size` pixels wide (4-module quiet zone). */
export async function renderToolQr(url: string, fmt: 'png' | 'svg', size: number): Promise<QrImage> {
  // Loaded on the first label, not at start-up: qrcode and its PNG encoder cost start-up time and memory.
  const { default: QRCode } = await import('qrcode');
  const options = { errorCorrectionLevel: 'M' as const, margin: 4, width: size };
  if (fmt === 'svg') {
    return {
      contentType: 'image/svg+xml; charset=utf-8',
      body: await QRCode.toString(url, { ...options, type: 'svg' }),
    };
  }
  return { contentType: 'image/png', body: await QRCode.toBuffer(url, { ...options, type: 'png' }) };
}
